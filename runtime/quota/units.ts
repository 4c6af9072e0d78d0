import type { Result } from '../operations/result.js';

/**
 * What the quota stage reads of a dispatched operation: the operation
 * context has these (runtime/operations/types.ts), named here so quotas do
 * not depend on the operation layer above them.
 */
export interface AdmissionRequest {
  readonly inv: { readonly correlationId: string; readonly body: unknown };
  readonly scope: { readonly project: { readonly id: string } } | null;
  readonly operationId: string;
  readonly entity: { readonly entityName: string } | null;
  readonly entityOperation: { readonly kind: string } | null;
}

/** What an operation consumes, known before it runs (CONTRACT: Usage and quotas). */
export interface Metered {
  kind: 'read.monthly' | 'write.monthly' | 'webhook.deliveries.monthly';
  /** Units the operation will consume at most: 1 per read, 1 per row written, N for a batch of N. */
  estimate: number;
  /** The dimensions a quota's own dimensions are matched against: `entity` (entity operations), */
  entity?: string;
  /** and `eventType` (webhook deliveries). */
  eventType?: string;
}

const READS: ReadonlySet<string> = new Set(['List', 'Read', 'Count', 'RelationList']);
const SINGLE_WRITES: ReadonlySet<string> = new Set(['Create', 'Update', 'Replace', 'Delete', 'RelationAttach', 'RelationDetach']);

function batchLength(body: unknown, key: 'items' | 'ids'): number {
  const list = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
  // A malformed batch is refused by its executor (422); it is estimated as one unit meanwhile.
  return Array.isArray(list) && list.length > 0 ? list.length : 1;
}

/**
 * The units of an entity operation, or null for what counts toward no windowed
 * quota (control plane, identity, usage, explainability; realtime subscribes,
 * which the hub bounds as open subscriptions: catalog.ts CONCURRENT_KINDS).
 */
export function meteredOf(ctx: AdmissionRequest): Metered | null {
  const op = ctx.entityOperation;
  if (op === null || ctx.entity === null) return null;
  const entity = ctx.entity.entityName;
  if (READS.has(op.kind)) return { kind: 'read.monthly', estimate: 1, entity };
  if (SINGLE_WRITES.has(op.kind)) return { kind: 'write.monthly', estimate: 1, entity };
  if (op.kind === 'BatchCreate' || op.kind === 'BatchUpdate') return { kind: 'write.monthly', estimate: batchLength(ctx.inv.body, 'items'), entity };
  if (op.kind === 'BatchDelete') return { kind: 'write.monthly', estimate: batchLength(ctx.inv.body, 'ids'), entity };
  return null;
}

/**
 * What an executed operation actually consumed, counted the way the usage
 * metering counts it: an idempotent replay wrote nothing, a batch delete
 * counts the rows it deleted (ids that matched nothing are skipped).
 */
export function actualUnits(m: Metered, result: Result): number {
  if (m.kind !== 'write.monthly') return 1;
  if (result.headers?.['Idempotent-Replayed'] === 'true') return 0;
  const data = (result.body as { data?: unknown } | undefined)?.data;
  if (Array.isArray(data)) return data.length;
  const deleted = (data as { deleted?: unknown } | undefined)?.deleted;
  if (typeof deleted === 'number') return Math.min(deleted, m.estimate);
  return m.estimate;
}
