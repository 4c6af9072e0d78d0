import type { OperationContext, Result } from '../operations/types.js';
import type { UsageEvent } from '../services.js';

/** Quota kinds metered by the platform (CONTRACT: Usage and quotas). */
export const USAGE_KINDS = ['read.monthly', 'write.monthly', 'realtime.subscriptions', 'webhook.deliveries.monthly'] as const;

/** Operations that open a realtime subscription (WebSocket `subscribe`, SSE). */
const SUBSCRIBE_OPERATIONS = new Set(['Realtime.Subscribe', 'Realtime.Sse']);

/** Rows a successful entity write changed; 0 for an idempotent replay (nothing was written again). */
function rowsWritten(kind: string, result: Result): number {
  if (result.headers?.['Idempotent-Replayed'] === 'true') return 0;
  switch (kind) {
    case 'Create': case 'Update': case 'Replace': case 'Delete': case 'RelationAttach': case 'RelationDetach':
      return 1;
    case 'BatchCreate': case 'BatchUpdate': {
      const data = (result.body as { data?: unknown } | undefined)?.data;
      return Array.isArray(data) ? data.length : 0;
    }
    case 'BatchDelete': {
      // Ids that matched no live row were skipped: only the rows actually deleted count.
      const deleted = ((result.body as { data?: { deleted?: unknown } } | undefined)?.data)?.deleted;
      return typeof deleted === 'number' ? deleted : 0;
    }
    default:
      return 0;
  }
}

function record(ctx: OperationContext, kind: string, quantity: number, dimensions?: Record<string, string>): void {
  const scope = ctx.scope!;
  const event: UsageEvent = {
    tenantId: scope.tenant.id, projectId: scope.project.id, kind, quantity, at: new Date().toISOString(),
    operationId: ctx.operationId, correlationId: ctx.inv.correlationId,
  };
  if (dimensions !== undefined) event.dimensions = dimensions;
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
  const op = ctx.entityOperation;
  if (op !== null) {
    const dimensions = { entity: ctx.entity!.entityName };
    if (op.kind === 'List' || op.kind === 'Read' || op.kind === 'Count' || op.kind === 'RelationList') {
      record(ctx, 'read.monthly', 1, dimensions);
      return;
    }
    const rows = rowsWritten(op.kind, result);
    if (rows > 0) record(ctx, 'write.monthly', rows, dimensions);
    return;
  }
  if (SUBSCRIBE_OPERATIONS.has(ctx.operationId)) record(ctx, 'realtime.subscriptions', 1);
}
