import type { UsageSink } from '../usage/sink.js';
import type { QuotaRecord } from './store.js';

/**
 * A soft quota's excess (CONTRACT: Usage and quotas): a `<kind>.overage`
 * usage event whose quantity is the units beyond the limit, dimensions
 * `{ quotaId, …the quota's dimensions }`, charged to the work that went over.
 */
export function recordOverage(
  usage: UsageSink | undefined, q: QuotaRecord, units: number, work: { operationId: string; correlationId: string }, at = Date.now(),
): void {
  if (usage === undefined || units <= 0) return;
  usage.record({
    tenantId: q.tenantId, projectId: q.projectId, kind: `${q.kind}.overage`, quantity: units,
    at: new Date(at).toISOString(), operationId: work.operationId, correlationId: work.correlationId,
    dimensions: { quotaId: q.id, ...q.dimensions },
  });
}
