import { randomUUID } from 'node:crypto';
import { nextPublicationVersion } from './publication-counter.js';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { ServiceError, conflict, validationFailed } from '../errors/service-error.js';
import { modelHash } from '../publication/hash.js';
import type { EntityDef, ProjectModel } from '../publication/model.js';
import type { PublicationRecord } from '../publication/compiled-publication.js';
import { mapDdlError, planChange, readHead, type PlannedChange, type SchemaAction, type SchemaChange, type SchemaChangeResult } from './schema-change.js';
import { schemaCrashPoint } from './schema-crash-hook.js';
import { isHandlerAction, planHandlerChange, publicHandler, type HandlerAction, type HandlerChangeInput, type HandlerPlan } from '../authored/handler-plan.js';

const S = PLATFORM_SCHEMA;

/**
 * One change of a migration, as the caller gave it: an entity definition (create/alter) or
 * `{ entityName }` (delete); or a pinned handler (addHandler/alterHandler) or `{ name }` (dropHandler).
 */
export interface ChangeInput {
  action: SchemaAction | HandlerAction;
  body: unknown;
}

/** How the journal names the migration: one entity (`single`) or a multi-change action (CONTRACT). */
export type MigrationKind = 'single' | 'migrate' | 'batch' | 'rollback' | 'transition' | 'merge';

export interface SchemaMigration {
  tenantId: string;
  projectId: string;
  branch: string;
  kind: MigrationKind;
  changes: ChangeInput[];
  actor: string;
  correlationId: string;
  /** rollback: the entry reverted; it and every later applied entry of the branch become `rolledBack`. */
  rollbackOf?: { journalId: string; toVersion: number };
  /** Extra statements run after the changes' DDL, in the same transaction (schema transitions). */
  extraStatements?: string[];
  /** Extra fields of the journal entry's public `change` (schema transitions). */
  changeFields?: Record<string, unknown>;
  /** Schema transitions: the entity's definition after this step (no `changes`; `extraStatements` are the DDL). */
  transition?: { entity: EntityDef };
  /** A proposal's merge: the base head its diff and validation were computed on; another head → 409, never a stale plan. */
  expectedFromVersion?: number;
}

export interface MigrationResult {
  publication: PublicationRecord;
  journalId: string;
  plans: PlannedChange[];
  handlerPlans: HandlerPlan[];
  statements: string[];
}

/** What the journal keeps to finish an interrupted entry: the same inputs, replayed on the same head. */
interface StoredPlan {
  kind: MigrationKind;
  changes: ChangeInput[];
  rollbackOf?: { journalId: string; toVersion: number };
  extraStatements?: string[];
  changeFields?: Record<string, unknown>;
  transition?: { entity: EntityDef };
}

export interface PlannedMigration {
  model: ProjectModel;
  /** The entity changes' plans, in order. */
  plans: PlannedChange[];
  /** The handler changes' plans, in order. */
  handlerPlans: HandlerPlan[];
  statements: string[];
}

/** One change on a model: the model it leaves (entity changes through planChange, handler changes through planHandlerChange). */
export function planOne(model: ProjectModel, schema: string, c: ChangeInput): { model: ProjectModel; entity?: PlannedChange; handler?: HandlerPlan } {
  if (isHandlerAction(c.action)) {
    const r = planHandlerChange(model, c as HandlerChangeInput);
    return { model: r.model, handler: r.plan };
  }
  const p = planChange(model, schema, c.action, c.body);
  return { model: p.model, entity: p };
}

/** Plans every change in order on the model the previous one left. Pure; the first failing change's error is the answer. */
export function planMigration(model: ProjectModel, schema: string, changes: ChangeInput[]): PlannedMigration {
  if (changes.length === 0) throw validationFailed('Schema.NoChanges', 'at least one change is required', 'changes');
  const plans: PlannedChange[] = [];
  const handlerPlans: HandlerPlan[] = [];
  const statements: string[] = [];
  let current = model;
  for (const c of changes) {
    const r = planOne(current, schema, c);
    if (r.entity !== undefined) {
      plans.push(r.entity);
      statements.push(...r.entity.statements);
    }
    if (r.handler !== undefined) handlerPlans.push(r.handler);
    current = r.model;
  }
  return { model: current, plans, handlerPlans, statements };
}

const entityChange = (p: PlannedChange, action: SchemaAction | HandlerAction): Record<string, unknown> =>
  p.after === null ? { action, entityName: p.entityName } : { action, entityName: p.entityName, definition: p.after };

const handlerChange = (p: HandlerPlan): Record<string, unknown> =>
  p.after === null ? { action: p.op, name: p.name } : { action: p.op, name: p.name, handler: publicHandler(p.after) };

/** The journal entry's public `change`. */
export function journalChange(plan: StoredPlan, planned: Pick<PlannedMigration, 'plans' | 'handlerPlans'>): Record<string, unknown> {
  if (plan.kind === 'transition') return { action: 'transition', ...plan.changeFields };
  let e = 0;
  let h = 0;
  const each = plan.changes.map((c) => (isHandlerAction(c.action) ? handlerChange(planned.handlerPlans[h++]!) : entityChange(planned.plans[e++]!, c.action)));
  if (plan.kind === 'single') return each[0]!;
  const base: Record<string, unknown> = { action: plan.kind, changes: each };
  if (plan.rollbackOf !== undefined) base.journalId = plan.rollbackOf.journalId;
  return { ...base, ...plan.changeFields };
}

const storedPlanOf = (m: SchemaMigration): StoredPlan => ({
  kind: m.kind, changes: m.changes,
  ...(m.rollbackOf === undefined ? {} : { rollbackOf: m.rollbackOf }),
  ...(m.extraStatements === undefined ? {} : { extraStatements: m.extraStatements }),
  ...(m.changeFields === undefined ? {} : { changeFields: m.changeFields }),
  ...(m.transition === undefined ? {} : { transition: m.transition }),
});

/** A stored plan on a head: a transition step replaces its entity, anything else plans its changes. */
function planStored(model: ProjectModel, schema: string, plan: StoredPlan): PlannedMigration {
  if (plan.transition !== undefined) {
    const e = plan.transition.entity;
    return { model: { ...model, entities: model.entities.map((x) => (x.entityName === e.entityName ? e : x)) }, plans: [], handlerPlans: [], statements: [] };
  }
  return planMigration(model, schema, plan.changes);
}

/** Entities a transition is moving: other changes to them wait until it completes (409). */
async function refuseWhileTransitionRuns(db: SqlExecutor, m: SchemaMigration, names: string[]): Promise<void> {
  if (m.kind === 'transition' || names.length === 0) return;
  const res = await db.query<{ entity_name: string }>(
    `SELECT entity_name FROM ${S}.schema_transitions WHERE project_id = $1 AND branch = $2 AND state = 'running' AND entity_name = ANY($3::text[]) LIMIT 1`,
    [m.projectId, m.branch, names],
  );
  if (res.rows[0] !== undefined) throw conflict('Schema.TransitionRunning', `a schema transition of '${res.rows[0].entity_name}' is running; change it once it completes or is rolled back`, 'entityName');
}

interface PendingEntry {
  id: string;
  tenantId: string;
  projectId: string;
  branch: string;
  fromVersion: number;
  plan: StoredPlan;
  correlationId: string;
}

/**
 * The DDL transaction of a journal entry written `pending`: replans on the
 * locked head (which must still be the entry's `fromVersion`), runs the DDL,
 * records the publication, moves the head and settles the entry `applied`.
 * Either all of it commits or none: a crash before the commit leaves the entry
 * `pending` and the schema untouched.
 */
async function settle(tx: SqlExecutor, e: PendingEntry): Promise<MigrationResult> {
  const head = await readHead(tx, e.projectId, e.branch, true);
  if (head.version !== e.fromVersion) throw conflict('Schema.HeadMoved', `the branch head moved from ${e.fromVersion} to ${head.version} since this change was planned`);
  const planned = planStored(head.model, head.schema, e.plan);
  const statements = [...planned.statements, ...(e.plan.extraStatements ?? [])];
  for (const stmt of statements) await tx.query(stmt);
  const version = await nextPublicationVersion(tx, e.projectId, head.version);
  const hash = modelHash(planned.model);
  const created = await tx.query<{ created_at: string }>(
    `INSERT INTO ${S}.publications (project_id, branch, version, model, descriptor_hash, correlation_id) VALUES ($1, $2, $3, $4::jsonb, $5, $6) RETURNING created_at`,
    [e.projectId, e.branch, version, JSON.stringify(planned.model), hash, e.correlationId],
  );
  await tx.query(`UPDATE ${S}.branches SET head_version = $3 WHERE project_id = $1 AND name = $2`, [e.projectId, e.branch, version]);
  if (e.plan.rollbackOf !== undefined) {
    await tx.query(
      `UPDATE ${S}.schema_journal SET state = 'rolledBack' WHERE project_id = $1 AND branch = $2 AND state = 'applied' AND to_version >= $3`,
      [e.projectId, e.branch, e.plan.rollbackOf.toVersion],
    );
  }
  await tx.query(`UPDATE ${S}.schema_journal SET state = 'applied', settled_at = now(), to_version = $2 WHERE id = $1`, [e.id, version]);
  return {
    publication: { tenantId: e.tenantId, projectId: e.projectId, branch: e.branch, version, schema: head.schema, model: planned.model, descriptorHash: hash, createdAt: created.rows[0]!.created_at },
    journalId: e.id,
    plans: planned.plans,
    handlerPlans: planned.handlerPlans,
    statements,
  };
}

/**
 * Applies a migration of one or more changes as one publication and one
 * journal entry. The entry is written `pending` (committed) before the DDL
 * transaction and settled inside it, so a node killed in between leaves a
 * detectable entry for the recoverer. Called only by the Project actor.
 */
export async function applySchemaMigration(db: SqlClient, m: SchemaMigration): Promise<MigrationResult> {
  const head = await readHead(db, m.projectId, m.branch, false);
  if (m.expectedFromVersion !== undefined && m.expectedFromVersion !== head.version) {
    throw conflict('Proposal.BaseMoved', `the base moved from ${m.expectedFromVersion} to ${head.version} since the proposal was validated; merge again to re-validate`);
  }
  // Invalid changes answer their 4xx before anything is written: no journal entry.
  const plan = storedPlanOf(m);
  const planned = planStored(head.model, head.schema, plan);
  const entry: PendingEntry = { id: randomUUID(), tenantId: m.tenantId, projectId: m.projectId, branch: m.branch, fromVersion: head.version, plan, correlationId: m.correlationId };
  const names = m.transition !== undefined ? [m.transition.entity.entityName] : [...new Set(planned.plans.map((p) => p.entityName))];
  await refuseWhileTransitionRuns(db, m, names);
  await db.query(
    `INSERT INTO ${S}.schema_journal (id, project_id, branch, action, entity_name, entity_names, definition, statements, from_version, to_version, state, actor, correlation_id, change, plan)
     VALUES ($1, $2, $3, $4, $5, $6::text[], $7::jsonb, $8::jsonb, $9, $10, 'pending', $11, $12, $13::jsonb, $14::jsonb)`,
    [
      entry.id, m.projectId, m.branch, m.kind === 'single' ? m.changes[0]!.action : m.kind, names.join(','), names,
      m.kind === 'single' && planned.plans[0] !== undefined && planned.plans[0].after !== null ? JSON.stringify(planned.plans[0].after) : null,
      JSON.stringify([...planned.statements, ...(m.extraStatements ?? [])]), head.version, head.version + 1, m.actor, m.correlationId,
      JSON.stringify(journalChange(plan, planned)), JSON.stringify(plan),
    ],
  );
  schemaCrashPoint('after-pending');
  try {
    return await db.transaction((tx) => settle(tx, entry));
  } catch (err) {
    // Nothing was applied: the attempt leaves no entry, as a change refused up front.
    await db.query(`DELETE FROM ${S}.schema_journal WHERE id = $1 AND state = 'pending'`, [entry.id]);
    if (ServiceError.is(err)) throw err;
    throw mapDdlError(err);
  }
}

export interface RecoveryOutcome {
  journalId: string;
  /** `applied`: finished; `failed`: undone (nothing of it applied); otherwise the entry was not interrupted. */
  state: string;
  result: MigrationResult | null;
}

/**
 * Finishes or undoes a `pending` entry (a change interrupted by a crash). Its DDL
 * transaction never committed, so the schema is as before: replaying it on
 * the same head finishes it; if the head moved or the change no longer applies,
 * it is settled `failed`, and the journal says so. Called only by the Project actor.
 */
export async function recoverJournalEntry(db: SqlClient, tenantId: string, projectId: string, journalId: string): Promise<RecoveryOutcome | null> {
  const res = await db.query<{ branch: string; from_version: string; state: string; plan: StoredPlan | null; correlation_id: string }>(
    `SELECT branch, from_version, state, plan, correlation_id FROM ${S}.schema_journal WHERE project_id = $1 AND id = $2`,
    [projectId, journalId],
  );
  const row = res.rows[0];
  if (row === undefined) return null;
  if (row.state !== 'pending' || row.plan === null) return { journalId, state: row.state, result: null };
  const entry: PendingEntry = { id: journalId, tenantId, projectId, branch: row.branch, fromVersion: Number(row.from_version), plan: row.plan, correlationId: row.correlation_id };
  try {
    const result = await db.transaction((tx) => settle(tx, entry));
    return { journalId, state: 'applied', result };
  } catch {
    await db.query(`UPDATE ${S}.schema_journal SET state = 'failed', settled_at = now() WHERE id = $1 AND state = 'pending'`, [journalId]);
    return { journalId, state: 'failed', result: null };
  }
}

/** Pending entries of every project, oldest first (the recoverer's work list at start). */
export async function pendingJournalEntries(db: SqlExecutor): Promise<Array<{ projectId: string; journalId: string }>> {
  const res = await db.query<{ project_id: string; id: string }>(`SELECT project_id, id FROM ${S}.schema_journal WHERE state = 'pending' ORDER BY created_at`);
  return res.rows.map((r) => ({ projectId: r.project_id, journalId: r.id }));
}

/** Applies one schema change as a one-change migration. Called only by the Project actor. */
export async function applySchemaChange(db: SqlClient, change: SchemaChange): Promise<SchemaChangeResult> {
  const res = await applySchemaMigration(db, { ...change, kind: 'single', changes: [{ action: change.action, body: change.body }] });
  return { publication: res.publication, entityName: res.plans[0]!.entityName, statements: res.statements, journalId: res.journalId };
}
