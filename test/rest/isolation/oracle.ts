/**
 * The oracle of the isolation property test. A request may read or change
 * only rows of the project its credential belongs to, and only when its scope
 * headers name that project; with USER_ISOLATION, a user also only its own
 * rows. Every answer is searched for stored values of other scopes, every
 * successful write is checked against the rows it may touch, and at the end
 * every project's rows are compared to the state the successful writes imply.
 */
import { MARKER, USER_ISOLATION, type RowState, type World } from './fixture.js';
import type { Effect, GeneratedRequest } from './generate.js';

export interface Outcome {
  status: number;
  text: string;
  /** The answer's data when it is a success (for created rows' ids). */
  data: unknown;
}

export class Tally {
  readonly byStatus = new Map<string, number>();
  readonly byKind = new Map<string, { total: number; ok: number }>();
  readonly violations: string[] = [];
  total = 0;
  mismatchedScope = 0;
  foreignIdsInScope = 0;
  inScopeSuccess = 0;
  serverErrors = 0;

  statusClass(status: number): string {
    if (status >= 200 && status < 300) return '2xx';
    if (status >= 500) return '5xx';
    return String(status);
  }
}

const inScope = (req: GeneratedRequest): boolean => req.headerProject !== null && req.headerProject === req.actor.project;

/** Whether the actor may touch this row at all (its project, and its own rows under USER_ISOLATION). */
function mayTouch(req: GeneratedRequest, row: RowState): boolean {
  if (row.project !== req.actor.project) return false;
  return !USER_ISOLATION || req.actor.user === 'K' || row.owner === req.actor.subjectId;
}

/** Stored values of other scopes in an answer. Events are checked per project only: the log is the project's. */
function leakedMarkers(req: GeneratedRequest, text: string): string[] {
  const out: string[] = [];
  const perUser = USER_ISOLATION && req.actor.user !== 'K' && !req.kind.startsWith('event');
  for (const m of text.matchAll(MARKER)) {
    if (Number(m[1]) !== req.actor.project) out.push(m[0]);
    else if (perUser && m[2] !== String(req.actor.user)) out.push(m[0]);
  }
  return out;
}

function applyEffect(world: World, req: GeneratedRequest, effect: Effect, created: unknown): string | null {
  if (effect.op === 'create') {
    const folder = world.rows.get(effect.folder);
    if (folder === undefined || folder.project !== req.actor.project) return `created a note referencing folder ${effect.folder} outside project P${req.actor.project}`;
    const id = (created as { id?: string } | undefined)?.id;
    if (typeof id !== 'string') return 'created without an id in the answer';
    world.rows.set(id, { entity: 'notes', project: req.actor.project, owner: effect.owner, text: effect.title, secret: effect.secret, folder: effect.folder });
    world.allIds.push({ id, entity: 'notes', project: req.actor.project });
    return null;
  }
  const row = world.rows.get(effect.id);
  if (row === undefined || row.entity !== effect.entity) return `${effect.op} of ${effect.entity}/${effect.id} succeeded, but no such live row exists for P${req.actor.project}`;
  if (!mayTouch(req, row)) return `${effect.op} of ${effect.entity}/${effect.id} (P${row.project}) succeeded for ${req.actor.label}`;
  if (effect.op === 'delete') world.rows.delete(effect.id);
  else if (effect.op === 'update') row.text = effect.text;
  else {
    const folder = world.rows.get(effect.folder);
    if (folder === undefined || folder.project !== req.actor.project) return `replaced a note to reference folder ${effect.folder} outside project P${req.actor.project}`;
    Object.assign(row, { owner: effect.owner, text: effect.title, secret: effect.secret, folder: effect.folder });
  }
  return null;
}

/** Judges one answer, updating the expected state for successful in-scope writes. */
export function judge(world: World, tally: Tally, req: GeneratedRequest, out: Outcome): void {
  tally.total++;
  const cls = tally.statusClass(out.status);
  tally.byStatus.set(cls, (tally.byStatus.get(cls) ?? 0) + 1);
  const k = tally.byKind.get(req.kind) ?? { total: 0, ok: 0 };
  k.total++;
  const ok = out.status >= 200 && out.status < 300;
  if (ok) k.ok++;
  tally.byKind.set(req.kind, k);
  const where = `#${tally.total} ${req.kind} ${req.method} ${req.path} as ${req.actor.label} with headers of ${req.headerProject === null ? 'no project' : `P${req.headerProject}`} → ${out.status}`;
  if (out.status >= 500) {
    tally.serverErrors++;
    tally.violations.push(`${where}: server error ${out.text.slice(0, 200)}`);
  }
  if (!inScope(req)) tally.mismatchedScope++;
  else if (req.foreignIds) tally.foreignIdsInScope++;
  for (const m of new Set(leakedMarkers(req, out.text))) tally.violations.push(`${where}: answer holds ${m}…`);
  if (!ok) return;
  if (!inScope(req)) {
    tally.violations.push(`${where}: accepted outside the credential's project`);
    return;
  }
  tally.inScopeSuccess++;
  if (req.expectRows !== undefined) {
    const problem = checkRows(world, req, req.expectRows, out.data);
    if (problem !== null) tally.violations.push(`${where}: ${problem}`);
  }
  if (req.kind === 'batchDelete') return judgeBatchDelete(world, tally, req, out, where);
  const created = Array.isArray(out.data) ? out.data : [out.data];
  let c = 0;
  for (const effect of req.effects) {
    const problem = applyEffect(world, req, effect, effect.op === 'create' ? created[c++] : undefined);
    if (problem !== null) tally.violations.push(`${where}: ${problem}`);
  }
}

/**
 * A list or count must answer exactly the scope's rows: a count that includes another project's
 * rows leaks without showing a single value, and a missing row means the model above is wrong.
 */
function checkRows(world: World, req: GeneratedRequest, want: NonNullable<GeneratedRequest['expectRows']>, data: unknown): string | null {
  const expected = [...world.rows]
    .filter(([, r]) => r.entity === want.entity && mayTouch(req, r) && (want.titlePrefix === null || r.text.startsWith(want.titlePrefix)))
    .map(([id]) => id)
    .sort();
  if (req.kind === 'count') {
    const count = (data as { count?: unknown } | undefined)?.count;
    return count === expected.length ? null : `count ${String(count)}, but ${expected.length} rows are in scope`;
  }
  const got = Array.isArray(data) ? data.map((r) => String((r as { id: unknown }).id)).sort() : null;
  return JSON.stringify(got) === JSON.stringify(expected) ? null : `listed ${got?.length ?? 'no'} rows, expected the ${expected.length} in scope`;
}

/**
 * A batch delete skips ids that match no live row of the scope and answers `{ deleted }`: it must
 * have deleted exactly the listed rows the actor may touch (foreign rows are checked at the end).
 */
function judgeBatchDelete(world: World, tally: Tally, req: GeneratedRequest, out: Outcome, where: string): void {
  const touchable = req.effects.filter((e) => {
    const row = e.op === 'delete' ? world.rows.get(e.id) : undefined;
    return row !== undefined && row.entity === 'notes' && mayTouch(req, row);
  });
  const deleted = (out.data as { deleted?: unknown } | undefined)?.deleted;
  if (deleted !== touchable.length) tally.violations.push(`${where}: deleted ${String(deleted)}, but only ${touchable.length} of the ids are rows it may delete`);
  for (const e of touchable) if (e.op === 'delete') world.rows.delete(e.id);
}

/** Differences between the rows a project holds (read as the admin) and the expected state. */
export function compareProject(world: World, project: number, entity: 'notes' | 'folders', actual: Record<string, unknown>[]): string[] {
  const diffs: string[] = [];
  const expected = new Map([...world.rows].filter(([, r]) => r.project === project && r.entity === entity));
  const textField = entity === 'notes' ? 'title' : 'name';
  for (const row of actual) {
    const id = String(row.id);
    const want = expected.get(id);
    if (want === undefined) {
      diffs.push(`P${project} ${entity}/${id} exists but should not (${String(row[textField])})`);
      continue;
    }
    expected.delete(id);
    const got = { text: row[textField], secret: row.secret, owner: row.owner, folder: entity === 'notes' ? row.folder : null };
    const exp = { text: want.text, secret: want.secret, owner: want.owner, folder: want.folder };
    if (JSON.stringify(got) !== JSON.stringify(exp)) diffs.push(`P${project} ${entity}/${id} is ${JSON.stringify(got)}, expected ${JSON.stringify(exp)}`);
  }
  for (const id of expected.keys()) diffs.push(`P${project} ${entity}/${id} is missing`);
  return diffs;
}
