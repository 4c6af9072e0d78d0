import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound, validationFailed } from '../errors/service-error.js';
import { findEntity, type EntityDef } from '../publication/model.js';
import { readHead } from './schema-change.js';
import { applySchemaMigration, type MigrationResult } from './schema-migration.js';
import {
  cleanupStatements, contractStep, expandStep, parseTransition, previousColumnOf, undoCompletedStep, undoExpandStep, unconvertedSql,
  type TransitionSpec, type TransitionStep,
} from './transition-plan.js';

const S = PLATFORM_SCHEMA;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Backfill pacing a transition body may set (bounded); defaults keep a large table's backfill gentle. */
export interface BackfillPace {
  batchRows: number;
  pauseMs: number;
}
const DEFAULT_PACE: BackfillPace = { batchRows: 500, pauseMs: 50 };

/** Stored with the row: the checked body, the entity before the transition, and the pace. */
interface StoredSpec {
  spec: TransitionSpec;
  original: EntityDef;
  pace: BackfillPace;
}

interface TransitionRow {
  id: string;
  branch: string;
  entity_name: string;
  kind: string;
  spec: StoredSpec;
  state: string;
  phase: string | null;
  backfilled: string;
  error: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

export interface TransitionCaller {
  branch: string;
  actor: string;
  correlationId: string;
}

const COLUMNS = 'id, branch, entity_name, kind, spec, state, phase, backfilled, error, created_at, updated_at';

/** CONTRACT's record: `{ id, state, phase, … }` with the body's own fields. */
export function transitionRecord(r: TransitionRow): Record<string, unknown> {
  const { kind: _k, entityName: _e, ...rest } = r.spec.spec;
  return {
    id: r.id, state: r.state, phase: r.phase, kind: r.kind, entityName: r.entity_name, ...rest, branch: r.branch,
    backfilledRows: Number(r.backfilled), ...(r.error === null ? {} : { error: r.error }),
    createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString(),
  };
}

export async function readTransition(db: SqlExecutor, projectId: string, branch: string, id: string): Promise<TransitionRow> {
  if (!UUID.test(id)) throw notFound('SchemaTransition.NotFound', 'schema transition not found');
  const res = await db.query<TransitionRow>(`SELECT ${COLUMNS} FROM ${S}.schema_transitions WHERE project_id = $1 AND branch = $2 AND id = $3`, [projectId, branch, id]);
  if (res.rows[0] === undefined) throw notFound('SchemaTransition.NotFound', 'schema transition not found');
  return res.rows[0];
}

export async function listTransitions(db: SqlExecutor, projectId: string, branch: string): Promise<Record<string, unknown>[]> {
  const res = await db.query<TransitionRow>(`SELECT ${COLUMNS} FROM ${S}.schema_transitions WHERE project_id = $1 AND branch = $2 ORDER BY created_at DESC LIMIT 500`, [projectId, branch]);
  return res.rows.map(transitionRecord);
}

function parsePace(body: unknown): BackfillPace {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const int = (k: keyof BackfillPace, min: number, max: number): number => {
    const v = b[k];
    if (v === undefined) return DEFAULT_PACE[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw validationFailed('SchemaTransition.InvalidBody', `${k} must be an integer in ${min}..${max}`, k);
    return v;
  };
  return { batchRows: int('batchRows', 1, 10_000), pauseMs: int('pauseMs', 0, 10_000) };
}

/** `POST /api/SchemaTransition`: checked against the branch head, stored `pending`; nothing changes yet. */
export async function createTransition(db: SqlClient, projectId: string, branch: string, body: unknown): Promise<Record<string, unknown>> {
  const head = await readHead(db, projectId, branch, false);
  const spec = parseTransition(body, head.model);
  const stored: StoredSpec = { spec, original: findEntity(head.model, spec.entityName)!, pace: parsePace(body) };
  const id = randomUUID();
  await db.query(
    `INSERT INTO ${S}.schema_transitions (id, project_id, branch, entity_name, kind, spec, state) VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'pending')`,
    [id, projectId, branch, spec.entityName, spec.kind, JSON.stringify(stored)],
  );
  return transitionRecord(await readTransition(db, projectId, branch, id));
}

const setState = (id: string, state: string, phase: string, error: string | null = null): string =>
  `UPDATE ${S}.schema_transitions SET state = '${state}', phase = '${phase}', error = ${error === null ? 'NULL' : `'${error.replace(/'/g, "''")}'`}, updated_at = now() WHERE id = '${id}'`;

/** One publication of a transition: its step's DDL and the transition's new state commit together (and are recovered together). */
async function publishStep(db: SqlClient, tenantId: string, projectId: string, who: TransitionCaller, t: TransitionRow, phase: string, step: TransitionStep, stateSql: string): Promise<MigrationResult> {
  return applySchemaMigration(db, {
    tenantId, projectId, branch: t.branch, actor: who.actor, correlationId: who.correlationId,
    kind: 'transition', changes: [], transition: { entity: step.entity },
    extraStatements: [...step.statements, stateSql],
    changeFields: { transitionId: t.id, kind: t.kind, phase, entityName: t.entity_name },
  });
}

async function currentEntity(db: SqlExecutor, projectId: string, t: TransitionRow): Promise<{ schema: string; entity: EntityDef }> {
  const head = await readHead(db, projectId, t.branch, false);
  const entity = findEntity(head.model, t.entity_name);
  if (entity === undefined) throw conflict('SchemaTransition.EntityGone', `entity '${t.entity_name}' no longer exists`);
  return { schema: head.schema, entity };
}

export interface TransitionOutcome {
  record: Record<string, unknown>;
  publication: MigrationResult | null;
  /** The backfill should (re)start on this node. */
  backfill: boolean;
  /** The contract's cleanup is due after its grace period. */
  cleanup?: boolean;
}

/** `execute`: expand (publication: both names) and hand over to the backfill. Only a pending transition runs. */
export async function executeTransition(db: SqlClient, tenantId: string, projectId: string, who: TransitionCaller, id: string): Promise<TransitionOutcome> {
  const t = await readTransition(db, projectId, who.branch, id);
  if (t.state !== 'pending') throw conflict('SchemaTransition.NotPending', `the transition is ${t.state}; only a pending one can be executed`);
  const { schema, entity } = await currentEntity(db, projectId, t);
  // The entity may have changed since the transition was created: check the body again.
  parseTransition({ ...t.spec.spec }, { entities: [entity] });
  t.spec.original = entity;
  await db.query(`UPDATE ${S}.schema_transitions SET spec = $2::jsonb, updated_at = now() WHERE id = $1`, [id, JSON.stringify(t.spec)]);
  const pub = await publishStep(db, tenantId, projectId, who, t, 'expand', expandStep(schema, id, entity, t.spec.spec), setState(id, 'running', 'backfill'));
  return { record: transitionRecord(await readTransition(db, projectId, t.branch, id)), publication: pub, backfill: true };
}

/** After the backfill: contract (publication: only the new name), or, when rows did not convert, undo and fail. */
export async function contractTransition(db: SqlClient, tenantId: string, projectId: string, who: TransitionCaller, id: string): Promise<TransitionOutcome> {
  const t = await readTransition(db, projectId, who.branch, id);
  if (t.state !== 'running' || t.phase !== 'backfill') return { record: transitionRecord(t), publication: null, backfill: false };
  const { schema, entity } = await currentEntity(db, projectId, t);
  const spec = t.spec.spec;
  const check = unconvertedSql(schema, entity, spec);
  const left = check === null ? 0 : (await db.query<{ n: number }>(check)).rows[0]!.n;
  if (left > 0) {
    const why = `${left} row(s) hold values of '${spec.field}' that do not convert`;
    const pub = await publishStep(db, tenantId, projectId, who, t, 'rollback', undoExpandStep(schema, id, entity, t.spec.original, spec), setState(id, 'failed', 'backfill', why));
    return { record: transitionRecord(await readTransition(db, projectId, t.branch, id)), publication: pub, backfill: false };
  }
  const original = t.spec.original.fields.find((f) => f.name === spec.field)!;
  const twoStep = cleanupStatements(schema, id, entity, spec).length > 0;
  const pub = await publishStep(db, tenantId, projectId, who, t, 'contract', contractStep(schema, id, entity, original, spec), setState(id, twoStep ? 'running' : 'completed', 'contract'));
  return { record: transitionRecord(await readTransition(db, projectId, t.branch, id)), publication: pub, backfill: false, cleanup: twoStep };
}

/** The end of the contract: the old column and the trigger are dropped; the transition is completed. */
export async function cleanupTransition(db: SqlClient, projectId: string, branch: string, id: string): Promise<TransitionOutcome> {
  const t = await readTransition(db, projectId, branch, id);
  if (t.state !== 'running' || t.phase !== 'contract') return { record: transitionRecord(t), publication: null, backfill: false };
  const head = await readHead(db, projectId, t.branch, false);
  await db.transaction(async (tx) => {
    for (const stmt of cleanupStatements(head.schema, id, { entityName: t.entity_name }, t.spec.spec)) await tx.query(stmt);
    await tx.query(setState(id, 'completed', 'contract'));
  });
  return { record: transitionRecord(await readTransition(db, projectId, t.branch, id)), publication: null, backfill: false };
}

/** `rollback`: pending → rolledBack; running → the old shape (its values were never touched); completed → the old shape with values from the new. */
export async function rollbackTransition(db: SqlClient, tenantId: string, projectId: string, who: TransitionCaller, id: string): Promise<TransitionOutcome> {
  const t = await readTransition(db, projectId, who.branch, id);
  const spec = t.spec.spec;
  if (t.state === 'pending') {
    await db.query(setState(id, 'rolledBack', 'expand'));
    return { record: transitionRecord(await readTransition(db, projectId, t.branch, id)), publication: null, backfill: false };
  }
  if (t.state === 'running' && t.phase === 'contract') throw conflict('SchemaTransition.Contracting', 'the transition is contracting; roll it back once it completes');
  if (t.state !== 'running' && t.state !== 'completed') throw conflict('SchemaTransition.NotRollbackable', `the transition is ${t.state}`);
  const { schema, entity } = await currentEntity(db, projectId, t);
  const step = t.state === 'running'
    ? undoExpandStep(schema, id, entity, t.spec.original, spec)
    : undoCompletedStep(schema, entity, t.spec.original, spec, await keptPreviousColumn(db, schema, entity, t));
  const pub = await publishStep(db, tenantId, projectId, who, t, 'rollback', step, setState(id, 'rolledBack', t.phase ?? 'expand'));
  return { record: transitionRecord(await readTransition(db, projectId, t.branch, id)), publication: pub, backfill: false };
}

/**
 * A completed changeType's kept old column, when it is still there and still
 * the old values of the field as it is now (the field has the transition's
 * type); otherwise null and the rollback casts the current values back.
 */
async function keptPreviousColumn(db: SqlExecutor, schema: string, entity: EntityDef, t: TransitionRow): Promise<string | null> {
  const spec = t.spec.spec;
  if (spec.kind !== 'changeType' || entity.fields.find((f) => f.name === spec.field)?.type !== spec.toType) return null;
  const column = previousColumnOf(t.id);
  const res = await db.query(`SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = $3`, [schema, entity.entityName, column]);
  return res.rows.length === 0 ? null : column;
}

/** Transitions a stopped node left running (the recoverer restarts their backfill or finishes their contract). */
export async function runningTransitions(db: SqlExecutor): Promise<Array<{ projectId: string; branch: string; id: string }>> {
  const res = await db.query<{ project_id: string; branch: string; id: string }>(`SELECT project_id, branch, id FROM ${S}.schema_transitions WHERE state = 'running' ORDER BY created_at`);
  return res.rows.map((r) => ({ projectId: r.project_id, branch: r.branch, id: r.id }));
}

export type { TransitionRow };
