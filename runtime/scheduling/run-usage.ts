import type { UsageSink } from '../usage/sink.js';
import type { RunCause } from './types.js';

/** A run a trigger queued, as its usage event names it. */
export interface QueuedRun {
  tenantId: string;
  projectId: string;
  runId: string;
  correlationId: string;
  cause: RunCause;
}

/** The usage kind of a run (CONTRACT "Usage and quotas": task runs meter `task.runs`, quota kind `task.runs.monthly`). */
export const TASK_RUNS_USAGE = 'task.runs';

/**
 * One `task.runs` usage event per run a trigger queued (schedule, event, webhook), recorded once
 * the transaction that queued them committed: a rolled-back scan meters nothing. Manual runs are
 * metered by their route's own audit row (its contract meters `task.runs.monthly`, so a quota
 * refuses them with 429 before anything is queued). Fires are never refused by a quota: they are
 * the project's own schedule; pausing the definition stops them.
 */
export function meterQueuedRuns(usage: UsageSink | undefined, runs: readonly QueuedRun[]): void {
  if (usage === undefined) return;
  const at = new Date().toISOString();
  for (const r of runs) {
    usage.record({
      tenantId: r.tenantId, projectId: r.projectId, kind: TASK_RUNS_USAGE, quantity: 1, at,
      operationId: `ControlPlane.TaskRun.${r.cause === 'schedule' ? 'Fire' : r.cause === 'event' ? 'Event' : 'Webhook'}`,
      correlationId: r.correlationId, dimensions: { cause: r.cause },
    });
  }
}
