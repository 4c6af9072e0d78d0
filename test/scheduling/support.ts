/** HTTP helpers of the scheduling suites (CONTRACT "Scheduling"). */
import { randomUUID } from 'node:crypto';
import type { Client } from '../support/client.js';
import type { TestServer } from '../support/server.js';
import { controlData } from '../control/support.js';
import { publishHandler } from '../authored/publish.js';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import type { MisfirePolicy, TriggerSpec } from '../../runtime/scheduling/types.js';

export const DEFINITIONS = '/api/scheduling/taskdefinition';

/** `POST /api/scheduling/taskdefinition` → the created definition record (asserts 201). */
export async function createDefinition(c: Client, body: Record<string, unknown>): Promise<any> {
  return controlData(await c.post(DEFINITIONS, body), 201, 'TaskDefinition', 'created');
}

/** `POST …/taskdefinition/{id}/triggers` → the created trigger record (asserts 201). */
export async function addTrigger(c: Client, definitionId: string, body: Record<string, unknown>): Promise<any> {
  return controlData(await c.post(`${DEFINITIONS}/${definitionId}/triggers`, body), 201, 'TaskTrigger', 'created');
}

/** `POST …/taskdefinition/{id}/pause` (asserts 200). */
export async function pauseDefinition(c: Client, definitionId: string): Promise<void> {
  controlData(await c.post(`${DEFINITIONS}/${definitionId}/pause`), 200, 'TaskDefinition', 'paused');
}

/** Publishes a background handler (ScheduledJob by default; no operation) of the given source and returns its record. */
export function publishJob(c: Client, name: string, code: string, surface = 'ScheduledJob', grants?: string[]): Promise<any> {
  return publishHandler(c, { name, code, surface, ...(grants === undefined ? {} : { grants }) });
}

export interface TaskOptions {
  /** A published background handler's name. */
  handler: string;
  input?: unknown;
  retry?: { maxAttempts?: number; backoffSeconds?: number; maxBackoffSeconds?: number };
  timeoutSeconds?: number;
  overlap?: 'skip' | 'queue' | 'allow';
  /** `paused`: created, then paused through its route (before its trigger is added). */
  state?: 'active' | 'paused';
  trigger?: TriggerSpec;
  misfire?: MisfirePolicy;
}

/** A definition of a fresh name (and its trigger, when given) made through the routes; returns both ids. */
export async function createTask(c: Client, t: TaskOptions): Promise<{ definitionId: string; triggerId: string | null }> {
  const { handler, state, trigger, misfire, ...rest } = t;
  const d = await createDefinition(c, { name: `task-${randomUUID().slice(0, 8)}`, handler, ...rest });
  if (state === 'paused') await pauseDefinition(c, d.id);
  const tr = trigger === undefined ? null : await addTrigger(c, d.id, { ...trigger, ...(misfire === undefined ? {} : { misfire }) });
  return { definitionId: d.id, triggerId: tr === null ? null : tr.id };
}

/**
 * Direct SQL, for the misfire tests only: a trigger due `ms` in the past. No
 * route can make one (a new trigger's first fire is always after now), and
 * waiting for real downtime would take the trigger's whole period.
 */
export async function backdateTrigger(db: SqlExecutor, triggerId: string, at: Date): Promise<void> {
  await db.query(`UPDATE ${PLATFORM_SCHEMA}.task_triggers SET next_fire_at = $2 WHERE id = $1`, [triggerId, at.toISOString()]);
}

/**
 * Direct SQL, for the lost-attempt test only: a `running` run (manual, serial)
 * whose attempt 1 is leased to a node that is gone, its lease already over. No
 * route can make one: a real attempt's lease is renewed by its live worker.
 */
export async function seedLostAttempt(db: SqlExecutor, scope: { tenantId: string; projectId: string }, definitionId: string): Promise<string> {
  const runId = randomUUID();
  await db.query(
    `INSERT INTO ${PLATFORM_SCHEMA}.task_runs (id, tenant_id, project_id, branch, definition_id, cause, scheduled_for, serial, max_attempts, state, attempts, correlation_id, started_at)
     VALUES ($1, $2, $3, 'main', $4, 'manual', now(), true, 3, 'running', 1, 'seeded', now())`,
    [runId, scope.tenantId, scope.projectId, definitionId],
  );
  await db.query(`INSERT INTO ${PLATFORM_SCHEMA}.task_attempts (id, run_id, project_id, number, node, lease_until) VALUES ($1, $2, $3, 1, 'gone-node', now() - interval '1 second')`,
    [randomUUID(), runId, scope.projectId]);
  return runId;
}

/**
 * Stops the node's ScheduledJobWorker: the scanner's suites check the runs a
 * scan queues, which a worker would otherwise claim and run at once.
 */
export async function stopWorker(server: TestServer): Promise<void> {
  await (server.node.services.scheduling as unknown as { stop(): Promise<void> }).stop();
}
