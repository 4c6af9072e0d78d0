import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound, validationFailed } from '../errors/service-error.js';
import { DEFINITION_COLUMNS, TRIGGER_COLUMNS, type DefinitionRow, type TriggerRow } from './rows.js';
import { SCHEDULING_LIMITS, type MisfirePolicy, type OverlapPolicy, type RetryPolicy, type TriggerSpec } from './types.js';

/**
 * Task definitions and their triggers (CONTRACT "Scheduling"; migration 29).
 * Every statement is scoped by project and branch: a definition of another
 * branch, another project or a deleted one is not there (404). Deletion is
 * soft, so runs keep naming their definition.
 */

const S = PLATFORM_SCHEMA;

export interface DefinitionScope {
  tenantId: string;
  projectId: string;
  branch: string;
}

/** A checked definition body with its defaults filled in (the PUT body replaces all of it). */
export interface DefinitionInput {
  name: string;
  handler: string;
  input: unknown;
  retry: RetryPolicy;
  timeoutSeconds: number;
  overlap: OverlapPolicy;
}

/** A checked trigger body (trigger-spec.ts) and its first fire. */
export interface TriggerInput {
  spec: TriggerSpec;
  misfire: MisfirePolicy;
  entity: string | null;
  receiverId: string | null;
  nextFireAt: Date | null;
}

export const definitionNotFound = (): Error => notFound('TaskDefinition.NotFound', 'task definition not found on this branch');
const triggerNotFound = (): Error => notFound('Trigger.NotFound', 'trigger not found on this task definition');
const nameTaken = (name: string): Error => conflict('TaskDefinition.NameTaken', `a task definition named '${name}' already exists on this branch`, 'name');

/** The unique name index answers a concurrent or existing holder of the name as a 409. */
async function orNameTaken<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (sqlstateOf(err) === SQLSTATE.UNIQUE_VIOLATION) throw nameTaken(name);
    throw err;
  }
}

const LIVE = `project_id = $1 AND branch = $2 AND deleted_at IS NULL`;

export function createDefinition(db: SqlExecutor, s: DefinitionScope, d: DefinitionInput): Promise<DefinitionRow> {
  return orNameTaken(d.name, async () => (await db.query<DefinitionRow>(
    `INSERT INTO ${S}.task_definitions (id, tenant_id, project_id, branch, name, handler, input, retry, timeout_seconds, overlap)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10) RETURNING ${DEFINITION_COLUMNS}`,
    [randomUUID(), s.tenantId, s.projectId, s.branch, d.name, d.handler, JSON.stringify(d.input ?? null), JSON.stringify(d.retry), d.timeoutSeconds, d.overlap],
  )).rows[0]!);
}

/** One page in name order (names are unique on the branch, so the last name is the cursor). */
export async function listDefinitions(db: SqlExecutor, s: DefinitionScope, afterName: string | null, size: number): Promise<{ rows: DefinitionRow[]; more: boolean }> {
  const res = await db.query<DefinitionRow>(
    `SELECT ${DEFINITION_COLUMNS} FROM ${S}.task_definitions WHERE ${LIVE} AND ($3::text IS NULL OR name > $3) ORDER BY name LIMIT ${size + 1}`,
    [s.projectId, s.branch, afterName],
  );
  return { rows: res.rows.slice(0, size), more: res.rows.length > size };
}

export async function readDefinition(db: SqlExecutor, s: DefinitionScope, id: string, lock = false): Promise<DefinitionRow> {
  const row = (await db.query<DefinitionRow>(
    `SELECT ${DEFINITION_COLUMNS} FROM ${S}.task_definitions WHERE ${LIVE} AND id = $3${lock ? ' FOR UPDATE' : ''}`,
    [s.projectId, s.branch, id],
  )).rows[0];
  if (row === undefined) throw definitionNotFound();
  return row;
}

/** Full replacement of the body's members; the state (active, paused) and the triggers stay. */
export async function updateDefinition(db: SqlExecutor, s: DefinitionScope, id: string, d: DefinitionInput): Promise<DefinitionRow> {
  const row = await orNameTaken(d.name, async () => (await db.query<DefinitionRow>(
    `UPDATE ${S}.task_definitions SET name = $4, handler = $5, input = $6::jsonb, retry = $7::jsonb, timeout_seconds = $8, overlap = $9, updated_at = now()
     WHERE ${LIVE} AND id = $3 RETURNING ${DEFINITION_COLUMNS}`,
    [s.projectId, s.branch, id, d.name, d.handler, JSON.stringify(d.input ?? null), JSON.stringify(d.retry), d.timeoutSeconds, d.overlap],
  )).rows[0]);
  if (row === undefined) throw definitionNotFound();
  return row;
}

/**
 * Pause or resume. Idempotent: pausing a paused definition answers it as it is.
 * Resume touches no trigger: a time trigger's `next_fire_at` stayed due while
 * paused, and the scanner treats it like a fire missed during downtime (misfire).
 */
export async function setDefinitionState(db: SqlExecutor, s: DefinitionScope, id: string, state: 'active' | 'paused'): Promise<DefinitionRow> {
  const row = (await db.query<DefinitionRow>(
    `UPDATE ${S}.task_definitions SET state = $4, updated_at = CASE WHEN state = $4 THEN updated_at ELSE now() END
     WHERE ${LIVE} AND id = $3 RETURNING ${DEFINITION_COLUMNS}`,
    [s.projectId, s.branch, id, state],
  )).rows[0];
  if (row === undefined) throw definitionNotFound();
  return row;
}

/**
 * Soft delete, in one transaction: the definition leaves every route (404), its
 * triggers go (nothing fires it again), its queued runs are cancelled. A running
 * attempt is left to finish: its worker owns it.
 */
export async function deleteDefinition(db: SqlClient, s: DefinitionScope, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const gone = await tx.query(`UPDATE ${S}.task_definitions SET deleted_at = now() WHERE ${LIVE} AND id = $3 RETURNING id`, [s.projectId, s.branch, id]);
    if (gone.rows.length === 0) throw definitionNotFound();
    await tx.query(`DELETE FROM ${S}.task_triggers WHERE definition_id = $1`, [id]);
    await tx.query(`UPDATE ${S}.task_runs SET state = 'cancelled', finished_at = now() WHERE definition_id = $1 AND state = 'queued'`, [id]);
  });
}

/**
 * Adds a trigger under the definition's row lock, so two concurrent adds cannot
 * both pass the per-definition bound. `spec` keeps `kind` too, so a stored spec
 * is a whole TriggerSpec that next-fire.ts takes as it is.
 */
export async function addTrigger(db: SqlClient, s: DefinitionScope, definitionId: string, t: TriggerInput): Promise<TriggerRow> {
  return db.transaction(async (tx) => {
    await readDefinition(tx, s, definitionId, true);
    const n = (await tx.query<{ n: string }>(`SELECT count(*) AS n FROM ${S}.task_triggers WHERE definition_id = $1`, [definitionId])).rows[0]!;
    if (Number(n.n) >= SCHEDULING_LIMITS.maxTriggers) {
      throw validationFailed('Trigger.TooMany', `a task definition has at most ${SCHEDULING_LIMITS.maxTriggers} triggers`);
    }
    return (await tx.query<TriggerRow>(
      `INSERT INTO ${S}.task_triggers (id, definition_id, project_id, kind, spec, misfire, entity, receiver_id, next_fire_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9) RETURNING ${TRIGGER_COLUMNS}`,
      [randomUUID(), definitionId, s.projectId, t.spec.kind, JSON.stringify(t.spec), t.misfire, t.entity, t.receiverId, t.nextFireAt?.toISOString() ?? null],
    )).rows[0]!;
  });
}

/** A definition's triggers, oldest first. */
export async function listTriggers(db: SqlExecutor, s: DefinitionScope, definitionId: string): Promise<TriggerRow[]> {
  await readDefinition(db, s, definitionId);
  return (await db.query<TriggerRow>(
    `SELECT ${TRIGGER_COLUMNS} FROM ${S}.task_triggers WHERE definition_id = $1 ORDER BY created_at, id`,
    [definitionId],
  )).rows;
}

export async function deleteTrigger(db: SqlClient, s: DefinitionScope, definitionId: string, triggerId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await readDefinition(tx, s, definitionId);
    const gone = await tx.query(`DELETE FROM ${S}.task_triggers WHERE definition_id = $1 AND id = $2 RETURNING id`, [definitionId, triggerId]);
    if (gone.rows.length === 0) throw triggerNotFound();
  });
}
