import type { Result } from '../operations/result.js';
import type { EntityOperationKind } from '../publication/operations.js';

/**
 * What the quota stage reads of a dispatched operation: the operation
 * context has these (runtime/operations/types.ts), named here so quotas do
 * not depend on the operation layer above them.
 */
export interface AdmissionRequest {
  readonly inv: { readonly correlationId: string; readonly body: unknown; readonly operation?: { readonly contract?: { readonly metering: DeclaredMetering } } };
  readonly scope: { readonly project: { readonly id: string } } | null;
  readonly operationId: string;
  readonly entity: { readonly entityName: string } | null;
  readonly entityOperation: { readonly kind: EntityOperationKind } | null;
}

/** An operation contract's metering rule (runtime/operations/contract/types.ts MeteringDecl), as quotas read it. */
type DeclaredMetering = { readonly unit: 'none' } | { readonly unit: Metered['kind']; readonly estimate?: (body: unknown) => number };

/** What an operation consumes, known before it runs (CONTRACT: Usage and quotas). */
export interface Metered {
  kind: 'read.monthly' | 'write.monthly' | 'webhook.deliveries.monthly' | 'authored.invocations.monthly' | 'authored.cpu_ms.monthly' | 'task.runs.monthly';
  /** Units the operation will consume at most: 1 per read, 1 per row written, N for a batch of N. */
  estimate: number;
  /** The dimensions a quota's own dimensions are matched against: `entity` (entity operations), */
  entity?: string;
  /** and `eventType` (webhook deliveries). */
  eventType?: string;
}

/** How an entity operation is metered: what it counts toward, and how many units a request estimates. */
interface MeterRule {
  kind: Metered['kind'];
  estimate: (body: unknown) => number;
}

const one = (): number => 1;
const READ: MeterRule = { kind: 'read.monthly', estimate: one };
const WRITE: MeterRule = { kind: 'write.monthly', estimate: one };
const BATCH_OF = (key: 'items' | 'ids'): MeterRule => ({ kind: 'write.monthly', estimate: (body) => batchLength(body, key) });

/**
 * Every entity operation kind's rule (CONTRACT: Usage and quotas): a `Record`
 * over the kinds, so a new kind does not build until it says what it counts.
 */
const METER_RULES: Record<EntityOperationKind, MeterRule> = {
  List: READ, Read: READ, Count: READ, RelationList: READ,
  Create: WRITE, Update: WRITE, Replace: WRITE, Delete: WRITE, RelationAttach: WRITE, RelationDetach: WRITE,
  BatchCreate: BATCH_OF('items'), BatchUpdate: BATCH_OF('items'), BatchDelete: BATCH_OF('ids'),
};

function batchLength(body: unknown, key: 'items' | 'ids'): number {
  const list = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
  // A malformed batch is refused by its executor (422); it is estimated as one unit meanwhile.
  return Array.isArray(list) && list.length > 0 ? list.length : 1;
}

/**
 * The units of an entity operation or of a declared operation whose contract
 * meters it, or null for what counts toward no windowed quota (control plane,
 * identity, usage, explainability; realtime subscribes, which the hub bounds as
 * open subscriptions: catalog.ts CONCURRENT_KINDS).
 */
export function meteredOf(ctx: AdmissionRequest): Metered | null {
  const op = ctx.entityOperation;
  if (op === null || ctx.entity === null) {
    // A declared platform operation counts what its contract says (most: nothing, and the contract says why).
    const declared = ctx.inv.operation?.contract?.metering;
    if (declared === undefined || declared.unit === 'none') return null;
    return { kind: declared.unit, estimate: declared.estimate?.(ctx.inv.body) ?? 1 };
  }
  const rule = METER_RULES[op.kind];
  return { kind: rule.kind, estimate: rule.estimate(ctx.inv.body), entity: ctx.entity.entityName };
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
