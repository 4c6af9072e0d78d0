import type {
  AttemptState, MisfirePolicy, OverlapPolicy, RetryPolicy, RunCause, RunState, TaskAttemptRecord, TaskDefinitionRecord, TaskRunRecord,
  TriggerAuditRecord, TriggerDecision, TriggerRecord, TriggerSpec,
} from './types.js';

/** Rows of migration 29's tables as `pg` and PGlite answer them, and their CONTRACT records. */

type Time = string | Date;
const iso = (t: Time): string => (t instanceof Date ? t : new Date(t)).toISOString();
const isoOrNull = (t: Time | null): string | null => (t === null ? null : iso(t));

export interface DefinitionRow {
  id: string; tenant_id: string; project_id: string; branch: string; name: string; handler: string; input: unknown;
  state: 'active' | 'paused'; retry: RetryPolicy; timeout_seconds: number; overlap: OverlapPolicy; created_at: Time; updated_at: Time;
}
export const DEFINITION_COLUMNS = 'id, tenant_id, project_id, branch, name, handler, input, state, retry, timeout_seconds, overlap, created_at, updated_at';

export const toDefinitionRecord = (r: DefinitionRow): TaskDefinitionRecord => ({
  id: r.id, name: r.name, handler: r.handler, input: r.input, state: r.state, retry: r.retry, timeoutSeconds: r.timeout_seconds,
  overlap: r.overlap, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at),
});

export interface TriggerRow {
  id: string; definition_id: string; project_id: string; kind: TriggerSpec['kind']; spec: TriggerSpec; misfire: MisfirePolicy;
  entity: string | null; receiver_id: string | null; next_fire_at: Time | null; last_fire_at: Time | null; created_at: Time;
}
export const TRIGGER_COLUMNS = 'id, definition_id, project_id, kind, spec, misfire, entity, receiver_id, next_fire_at, last_fire_at, created_at';

export const toTriggerRecord = (r: TriggerRow): TriggerRecord => ({
  ...r.spec, kind: r.kind, id: r.id, definitionId: r.definition_id, misfire: r.misfire, nextFireAt: isoOrNull(r.next_fire_at), createdAt: iso(r.created_at),
} as TriggerRecord);

export interface RunRow {
  id: string; definition_id: string; trigger_id: string | null; cause: RunCause; scheduled_for: Time; state: RunState; attempts: number;
  input: unknown; output: unknown; error: unknown; event_id: string | null; created_at: Time; started_at: Time | null; finished_at: Time | null;
}

export function toRunRecord(r: RunRow): TaskRunRecord {
  const out: TaskRunRecord = {
    id: r.id, definitionId: r.definition_id, triggerId: r.trigger_id, cause: r.cause, scheduledFor: iso(r.scheduled_for), state: r.state,
    attempts: Number(r.attempts), input: r.input, createdAt: iso(r.created_at),
  };
  if (r.output !== null && r.output !== undefined) out.output = r.output;
  if (r.error !== null && r.error !== undefined) out.error = r.error;
  if (r.event_id !== null) out.eventId = r.event_id;
  if (r.started_at !== null) out.startedAt = iso(r.started_at);
  if (r.finished_at !== null) out.finishedAt = iso(r.finished_at);
  return out;
}

export interface AttemptRow {
  id: string; run_id: string; number: number; state: AttemptState; node: string; started_at: Time; finished_at: Time | null; error: unknown;
}
export const ATTEMPT_COLUMNS = 'id, run_id, number, state, node, started_at, finished_at, error';

export function toAttemptRecord(r: AttemptRow): TaskAttemptRecord {
  const out: TaskAttemptRecord = { id: r.id, runId: r.run_id, number: Number(r.number), state: r.state, node: r.node, startedAt: iso(r.started_at) };
  if (r.finished_at !== null) out.finishedAt = iso(r.finished_at);
  if (r.error !== null && r.error !== undefined) out.error = r.error;
  return out;
}

export interface AuditRow {
  seq: string; at: Time; trigger_id: string | null; definition_id: string; scheduled_for: Time | null; decision: TriggerDecision; run_id: string | null;
}

export function toAuditRecord(r: AuditRow): TriggerAuditRecord {
  const out: TriggerAuditRecord = { at: iso(r.at), triggerId: r.trigger_id, definitionId: r.definition_id, scheduledFor: isoOrNull(r.scheduled_for), decision: r.decision };
  if (r.run_id !== null) out.runId = r.run_id;
  return out;
}
