import type { OperationContext, Result } from '../operations/types.js';
import type { UsageEvent } from '../services.js';
import { actualUnits, meteredOf } from '../quota/units.js';

/** Quota kinds metered by the platform (CONTRACT: Usage and quotas). */
export const USAGE_KINDS = ['read.monthly', 'write.monthly', 'realtime.subscriptions', 'webhook.deliveries.monthly'] as const;

/** Operations that open a realtime subscription (WebSocket `subscribe`, SSE). */
const SUBSCRIBE_OPERATIONS = new Set(['Realtime.Subscribe', 'Realtime.Sse']);

function record(ctx: OperationContext, kind: string, quantity: number, dimensions?: Record<string, string>): void {
  const scope = ctx.scope!;
  const event: UsageEvent = {
    tenantId: scope.tenant.id, projectId: scope.project.id, kind, quantity, at: new Date().toISOString(),
    operationId: ctx.operationId, correlationId: ctx.inv.correlationId,
  };
  // The protocol a call came in by, when it is not REST (as audit rows record it): `{ entity, protocol: 'graphql' }`.
  const dims = ctx.inv.protocol === 'rest' ? dimensions : { ...dimensions, protocol: ctx.inv.protocol };
  if (dims !== undefined) event.dimensions = dims;
  ctx.services.usage!.record(event);
}

/**
 * Meters one successfully executed operation (dispatch, after execute).
 * Entity reads count 1 `read.monthly`, entity writes their rows as
 * `write.monthly`, an opened realtime subscription 1 `realtime.subscriptions`;
 * everything else (control plane, identity, usage, explainability) counts
 * nothing. A refused operation never gets here. Cost on the hot path: a
 * switch and one object pushed into the writer's buffer.
 */
export function meterOperation(ctx: OperationContext, result: Result): void {
  if (ctx.services.usage === undefined || ctx.scope === null) return;
  // One counting rule with quotas (runtime/quota/units.ts): the units a quota counts are the units metered.
  const m = meteredOf(ctx);
  if (m !== null) {
    const units = actualUnits(m, result);
    if (units > 0) record(ctx, m.kind, units, { entity: m.entity! });
    return;
  }
  if (SUBSCRIBE_OPERATIONS.has(ctx.operationId)) record(ctx, 'realtime.subscriptions', 1);
}
