import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { RUN_EVENT_TYPES } from './types.js';

const S = PLATFORM_SCHEMA;

export type RunEnding = keyof typeof RUN_EVENT_TYPES;

/**
 * `task.run.succeeded|failed|cancelled` into the outbox (CONTRACT "Scheduling", Events:
 * `entity: "TaskRun"`, `entityId` = the run id), in the transaction that writes the
 * run's final state, so the event exists exactly when the state does. The
 * publication version is the attempt's when one ran, else the branch's latest.
 * The caller kicks the outbox once that transaction committed.
 */
export async function recordRunEvent(tx: SqlExecutor, runId: string, ending: RunEnding, correlationId: string, publicationVersion: number | null): Promise<void> {
  await tx.query(
    `INSERT INTO ${S}.outbox (event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version)
     SELECT $1, $2, r.tenant_id, r.project_id, r.branch, 'TaskRun', r.id::text, '[]'::jsonb, $4,
       COALESCE($5::bigint, (SELECT max(p.version) FROM ${S}.publications p WHERE p.project_id = r.project_id AND p.branch = r.branch), 0)
     FROM ${S}.task_runs r WHERE r.id = $3`,
    [randomUUID(), RUN_EVENT_TYPES[ending], runId, correlationId, publicationVersion],
  );
}
