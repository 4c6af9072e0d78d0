import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../storage/index.js';
import type { EventEnvelope } from '../events/event-store.js';
import { filterTarget } from '../entities/list.js';
import { parseFilter } from '../filter/parse.js';
import { filterToSql, SqlParams } from '../filter/to-sql.js';
import type { Logger } from '../log.js';
import type { PublicationSource } from '../services.js';
import { enqueueRun, recordTriggerDecision } from './enqueue.js';
import { meterQueuedRuns, type QueuedRun } from './run-usage.js';
import type { UsageSink } from '../usage/sink.js';
import type { OverlapPolicy, RetryPolicy, TriggerSpec } from './types.js';

const S = PLATFORM_SCHEMA;
/** How long the router waits on a gap in the event log's seq before stepping over it (as the webhook router does). */
const GAP_GRACE_MS = 2_000;
const BATCH = 500;

interface EventRow extends EventEnvelope { seq: string; entity: string | null }
interface EventTriggerRow {
  id: string; project_id: string; entity: string; spec: Extract<TriggerSpec, { kind: 'event' }>; created_at: string | Date;
  definition_id: string; tenant_id: string; branch: string; state: 'active' | 'paused'; overlap: OverlapPolicy; retry: RetryPolicy; input: unknown;
}

export interface EventRouterDeps {
  db: SqlClient;
  nodeId: string;
  publications: PublicationSource;
  log: Logger;
  /** Where each queued run's `task.runs` usage goes (run-usage.ts); absent: not metered. */
  usage?: UsageSink;
}

const kindOf = (type: string): string => type.slice(type.lastIndexOf('.') + 1);

/** The databases whose event cursor row this process has made sure of. */
const cursorMade = new WeakSet<SqlClient>();

/**
 * Whether the row an event names matches a trigger's filter as the row is now
 * (CONTRACT: the realtime filter shape): the entity filter compiled to SQL, as
 * entity lists and realtime do, over `SELECT 1 … WHERE id = $1`. A deleted
 * row matches only triggers without a filter; a filter that no longer parses
 * against the published entity (the schema changed) matches nothing.
 */
async function rowMatches(deps: EventRouterDeps, t: EventTriggerRow, e: EventRow): Promise<boolean> {
  if (t.spec.filter === undefined || t.spec.filter === null) return true;
  if (kindOf(e.type) === 'deleted') return false;
  const entityId = (e.data as { entityId?: unknown }).entityId;
  if (typeof entityId !== 'string') return false;
  try {
    const pub = await deps.publications.current(t.tenant_id, t.project_id, t.branch);
    const entity = pub.entities.get(t.entity);
    if (entity === undefined) return false;
    const params = new SqlParams();
    const id = params.add(entityId);
    const cond = filterToSql(parseFilter(t.spec.filter, entity), entity.entityName, 't', filterTarget(entity), params);
    const res = await deps.db.query(`SELECT 1 FROM ${entity.table} t WHERE t.id = ${id}::uuid${entity.liveClause} AND (${cond})`, params.values);
    return res.rows.length > 0;
  } catch (err) {
    deps.log.warn('event trigger filter not evaluated; the event does not match', { triggerId: t.id, error: err instanceof Error ? err.message : String(err) });
    return false;
  }
}

const envelopeOf = (e: EventRow): EventEnvelope => ({
  id: e.id, type: e.type, occurredAt: new Date(e.occurredAt).toISOString(), tenantId: e.tenantId, projectId: e.projectId,
  publicationVersion: Number(e.publicationVersion), correlationId: e.correlationId, data: e.data,
});

/** The triggers an event starts a run of: same project, entity, branch and kind, created before the event. */
function candidates(triggers: readonly EventTriggerRow[], e: EventRow): EventTriggerRow[] {
  const branch = typeof (e.data as { branch?: unknown }).branch === 'string' ? (e.data as { branch: string }).branch : 'main';
  const kind = kindOf(e.type);
  return triggers.filter((t) => t.project_id === e.projectId && t.entity === e.entity && t.branch === branch
    && e.type === `entity.${t.entity}.${kind}` && (t.spec.kinds as string[]).includes(kind)
    && new Date(t.created_at).getTime() <= new Date(e.occurredAt).getTime());
}

/** The cursor past contiguous seqs; a gap older than the grace is stepped over (a rolled-back or conflicting insert). */
function advance(lastSeq: string, gapExpired: boolean, seqs: readonly string[]): { last: string; blocked: boolean } {
  let last = BigInt(lastSeq);
  let expired = gapExpired;
  for (const s of seqs) {
    const seq = BigInt(s);
    if (seq !== last + 1n) {
      if (!expired) return { last: last.toString(), blocked: true };
      expired = false;
    }
    last = seq;
  }
  return { last: last.toString(), blocked: false };
}

/**
 * Routes new entity events to event triggers: one run per (trigger, event), or a
 * `skippedPaused` audit row for a paused definition. Reads the `events` log after
 * the scheduler's own cursor (`scheduler_state` row 'events', made at the log's
 * end the first time: triggers fire on events after they exist). Filters are
 * evaluated before the transaction (they read entity tables); the transaction
 * then locks the cursor, checks that no other router moved it meanwhile,
 * queues the runs and advances the cursor, so runs and cursor commit together.
 * The unique (trigger, event) key makes a repeated route a no-op.
 * Returns the runs queued; `more` when a full batch was read.
 */
export async function routeEventTriggers(deps: EventRouterDeps): Promise<{ queued: number; more: boolean }> {
  const { db } = deps;
  // The cursor row is made once (at the log's end); later ticks of this node need not ask again.
  if (!cursorMade.has(db)) {
    await db.query(
      `INSERT INTO ${S}.scheduler_state (name, node, last_scan_at, lag_ms, last_seq)
       SELECT 'events', $1, now(), 0, COALESCE((SELECT max(seq) FROM ${S}.events), 0) ON CONFLICT (name) DO NOTHING`, [deps.nodeId],
    );
    cursorMade.add(db);
  }
  const cur = (await db.query<{ last_seq: string; gap_expired: boolean | null }>(
    `SELECT last_seq, now() - gap_since > ($1::int * interval '1 millisecond') AS gap_expired FROM ${S}.scheduler_state WHERE name = 'events'`, [GAP_GRACE_MS],
  )).rows[0]!;
  // Positions first, whole events only where an event trigger could want them (most projects have none).
  const positions = (await db.query<{ seq: string; wanted: boolean }>(
    `SELECT e.seq, EXISTS (SELECT 1 FROM ${S}.task_triggers t WHERE t.kind = 'event' AND t.project_id = e.project_id AND t.entity = e.entity) AS wanted
     FROM ${S}.events e WHERE e.seq > $1 ORDER BY e.seq LIMIT ${BATCH}`, [cur.last_seq],
  )).rows;
  if (positions.length === 0) return { queued: 0, more: false };
  const wanted = positions.filter((p) => p.wanted).map((p) => p.seq);
  const events = wanted.length === 0 ? [] : (await db.query<EventRow>(
    `SELECT seq, id, type, entity, occurred_at AS "occurredAt", tenant_id AS "tenantId", project_id AS "projectId", publication_version AS "publicationVersion", correlation_id AS "correlationId", data
     FROM ${S}.events WHERE seq = ANY($1::bigint[]) ORDER BY seq`, [wanted],
  )).rows;
  const projects = [...new Set(events.map((e) => e.projectId))];
  const triggers = projects.length === 0 ? [] : (await db.query<EventTriggerRow>(
    `SELECT t.id, t.project_id, t.entity, t.spec, t.created_at, d.id AS definition_id, d.tenant_id, d.branch, d.state, d.overlap, d.retry, d.input
     FROM ${S}.task_triggers t JOIN ${S}.task_definitions d ON d.id = t.definition_id
     WHERE t.kind = 'event' AND d.deleted_at IS NULL AND t.project_id = ANY($1::uuid[])`, [projects],
  )).rows;
  const fires: Array<{ t: EventTriggerRow; e: EventRow }> = [];
  for (const e of events) for (const t of candidates(triggers, e)) if (await rowMatches(deps, t, e)) fires.push({ t, e });
  const step = advance(cur.last_seq, cur.gap_expired === true, positions.map((p) => p.seq));
  const routed = fires.filter((f) => BigInt(f.e.seq) <= BigInt(step.last));
  const queued = await db.transaction(async (tx) => {
    const locked = (await tx.query<{ last_seq: string }>(`SELECT last_seq FROM ${S}.scheduler_state WHERE name = 'events' FOR UPDATE`)).rows[0];
    if (locked === undefined || locked.last_seq !== cur.last_seq) return [];
    const runs: QueuedRun[] = [];
    for (const { t, e } of routed) {
      const run = await fireEvent(tx, t, e);
      if (run !== null) runs.push(run);
    }
    await tx.query(
      `UPDATE ${S}.scheduler_state SET last_seq = $1, node = $3, last_scan_at = now(),
         gap_since = CASE WHEN NOT $2::boolean THEN NULL WHEN last_seq = $1 AND gap_since IS NOT NULL THEN gap_since ELSE now() END
       WHERE name = 'events'`, [step.last, step.blocked, deps.nodeId],
    );
    return runs;
  });
  meterQueuedRuns(deps.usage, queued);
  return { queued: queued.length, more: positions.length === BATCH && !step.blocked };
}

/** One (trigger, event): its run, or `skippedPaused`. The run when one was queued. */
async function fireEvent(tx: SqlExecutor, t: EventTriggerRow, e: EventRow): Promise<QueuedRun | null> {
  const scheduledFor = new Date(e.occurredAt);
  const audit = { projectId: t.project_id, definitionId: t.definition_id, triggerId: t.id, scheduledFor };
  if (t.state === 'paused') {
    await recordTriggerDecision(tx, { ...audit, decision: 'skippedPaused' });
    return null;
  }
  const out = await enqueueRun(tx, {
    definition: { id: t.definition_id, tenantId: t.tenant_id, projectId: t.project_id, branch: t.branch, overlap: t.overlap, retry: t.retry },
    triggerId: t.id, cause: 'event', scheduledFor, input: t.input, correlationId: e.correlationId,
    eventId: e.id, context: { event: envelopeOf(e) as unknown as Record<string, unknown> },
  });
  if (out.decision !== 'started') return null;
  await recordTriggerDecision(tx, { ...audit, decision: 'started', runId: out.run.id });
  return { tenantId: t.tenant_id, projectId: t.project_id, runId: out.run.id, correlationId: e.correlationId, cause: 'event' };
}
