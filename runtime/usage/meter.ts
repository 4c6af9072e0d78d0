import type { OperationContext, Result } from '../operations/types.js';
import type { RecordedUsage } from '../pipeline/audit-row.js';
import type { UsageEvent } from '../services.js';
import { actualUnits, meteredOf } from '../quota/units.js';
import { usageKindOf } from '../quota/catalog.js';

/** Quota kinds metered by the platform (CONTRACT: Usage and quotas). */
export const USAGE_KINDS = ['read.monthly', 'write.monthly', 'realtime.subscriptions', 'webhook.deliveries.monthly', 'authored.invocations', 'authored.cpu_ms', 'task.runs'] as const;

/** The kinds a dispatched operation's audit row can carry (usage-store.ts lists them per kind). */
export const AUDITED_USAGE_KINDS = ['read.monthly', 'write.monthly', 'realtime.subscriptions', 'authored.invocations', 'task.runs'] as const;

/** Operations that open a realtime subscription (WebSocket `subscribe`, SSE). */
const SUBSCRIBE_OPERATIONS = new Set(['Realtime.Subscribe', 'Realtime.Sse']);

function recorded(ctx: OperationContext, kind: string, quantity: number, dimensions?: Record<string, string>): RecordedUsage {
  // The protocol a call came in by, when it is not REST (as audit rows record it): `{ entity, protocol: 'graphql' }`.
  const dims = ctx.inv.protocol === 'rest' ? dimensions : { ...dimensions, protocol: ctx.inv.protocol };
  return dims === undefined ? { kind, quantity } : { kind, quantity, dimensions: dims };
}

/**
 * The usage one successfully executed operation consumed, or null. Entity
 * reads count 1 `read.monthly`, entity writes their rows as `write.monthly`,
 * an opened realtime subscription 1 `realtime.subscriptions`; everything else
 * (control plane, identity, usage, explainability) counts nothing, and a
 * refused operation never gets here. Null as well when the node meters
 * nothing. Cost on the hot path: a switch and one small object.
 */
export function usageOf(ctx: OperationContext, result: Result): RecordedUsage | null {
  if (ctx.services.usage === undefined || ctx.scope === null) return null;
  // One counting rule with quotas (runtime/quota/units.ts): the units a quota counts are the units metered.
  const m = meteredOf(ctx);
  if (m !== null) {
    const units = actualUnits(m, result);
    // Recorded under the usage kind the quota kind counts (`task.runs.monthly` counts `task.runs`).
    return units > 0 ? recorded(ctx, usageKindOf(m.kind), units, m.entity === undefined ? undefined : { entity: m.entity }) : null;
  }
  return SUBSCRIBE_OPERATIONS.has(ctx.operationId) ? recorded(ctx, 'realtime.subscriptions', 1) : null;
}

/**
 * Records usage that no audit row carries (an operation whose allowed calls
 * leave no row of their own: `evidence: 'failures'`) as a usage event of its own.
 * Usage on an audit row needs nothing more: the audit row is the event.
 */
export function meterWithoutAuditRow(ctx: OperationContext, usage: RecordedUsage): void {
  const scope = ctx.scope!;
  const event: UsageEvent = {
    tenantId: scope.tenant.id, projectId: scope.project.id, kind: usage.kind, quantity: usage.quantity, at: new Date().toISOString(),
    operationId: ctx.operationId, correlationId: ctx.inv.correlationId,
  };
  if (usage.dimensions !== undefined) event.dimensions = usage.dimensions;
  ctx.services.usage!.record(event);
}
