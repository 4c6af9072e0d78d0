import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { enqueueRun, recordTriggerDecision } from './enqueue.js';
import type { QueuedRun } from './run-usage.js';
import type { OverlapPolicy, RetryPolicy, RunContext } from './types.js';

const S = PLATFORM_SCHEMA;

interface WebhookTriggerRow {
  id: string; definition_id: string; tenant_id: string; project_id: string; branch: string; state: 'active' | 'paused';
  overlap: OverlapPolicy; retry: RetryPolicy; input: unknown;
}

/** An accepted (new) inbound delivery, as a webhook run's `ctx.webhook` shows it, and the inbound event's id. */
export interface AcceptedDelivery {
  eventId: string;
  correlationId: string;
  webhook: NonNullable<RunContext['webhook']>;
}

/**
 * Queues one run per webhook trigger of the delivery's receiver (cause
 * `webhook`, eventId = the inbound event's id), or records `skippedPaused` for
 * a paused definition. Called by acceptInbound in the transaction that records
 * a NEW receipt: a redelivery (same external id) finds its receipt and never
 * gets here, and the unique (trigger, event) key backs that up.
 * Returns the runs queued (the caller meters them once committed).
 */
export async function startWebhookRuns(tx: SqlExecutor, projectId: string, d: AcceptedDelivery): Promise<QueuedRun[]> {
  const triggers = (await tx.query<WebhookTriggerRow>(
    `SELECT t.id, d.id AS definition_id, d.tenant_id, d.project_id, d.branch, d.state, d.overlap, d.retry, d.input
     FROM ${S}.task_triggers t JOIN ${S}.task_definitions d ON d.id = t.definition_id
     WHERE t.kind = 'webhook' AND t.receiver_id = $1::uuid AND t.project_id = $2 AND d.deleted_at IS NULL`, [d.webhook.receiverId, projectId],
  )).rows;
  const scheduledFor = new Date();
  const queued: QueuedRun[] = [];
  for (const t of triggers) {
    const audit = { projectId: t.project_id, definitionId: t.definition_id, triggerId: t.id, scheduledFor };
    if (t.state === 'paused') {
      await recordTriggerDecision(tx, { ...audit, decision: 'skippedPaused' });
      continue;
    }
    const out = await enqueueRun(tx, {
      definition: { id: t.definition_id, tenantId: t.tenant_id, projectId: t.project_id, branch: t.branch, overlap: t.overlap, retry: t.retry },
      triggerId: t.id, cause: 'webhook', scheduledFor, input: t.input, correlationId: d.correlationId, eventId: d.eventId, context: { webhook: d.webhook },
    });
    if (out.decision !== 'started') continue;
    queued.push({ tenantId: t.tenant_id, projectId: t.project_id, runId: out.run.id, correlationId: d.correlationId, cause: 'webhook' });
    await recordTriggerDecision(tx, { ...audit, decision: 'started', runId: out.run.id });
  }
  return queued;
}
