import type { PreparedSubscription, RealtimeHub } from '../../realtime/hub.js';
import { QUOTA_KIND } from '../../realtime/subscription-limits.js';
import { NO_CONCURRENCY_QUOTAS, type ConcurrencyQuotas } from '../../quota/ledger.js';
import { recordOverage } from '../../quota/overage.js';
import type { OperationContext } from '../types.js';

/**
 * The project's `realtime.subscriptions` quotas (docs/usage.md "Catalog"):
 * one mechanism with the hub's slot accounting. A hard or reservation quota
 * replaces the node's default bound of open subscriptions; a soft one lets
 * subscriptions past its limit open and charges each as 1 overage unit.
 */
export function subscriptionQuotas(ctx: OperationContext): ConcurrencyQuotas | Promise<ConcurrencyQuotas> {
  return ctx.services.quotas?.concurrency(ctx.scope!.project.id, QUOTA_KIND) ?? NO_CONCURRENCY_QUOTAS;
}

/** Takes a slot under the project's quotas (429 when none is free); a soft quota's excess becomes an overage event. */
export async function reserveSlot(ctx: OperationContext, hub: RealtimeHub, prepared: PreparedSubscription): Promise<void> {
  const loaded = subscriptionQuotas(ctx);
  const quotas = loaded instanceof Promise ? await loaded : loaded;
  const open = hub.reserve(prepared, quotas);
  for (const q of quotas.soft) {
    if (open > q.limit) recordOverage(ctx.services.usage, q, 1, { operationId: ctx.operationId, correlationId: ctx.inv.correlationId });
  }
}
