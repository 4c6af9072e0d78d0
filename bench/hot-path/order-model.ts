/**
 * The table of the hot-path benchmark (issue 9): `Order`, seeded with 100k rows, read by id,
 * listed 20 at a time filtered by `status` and sorted by `-createdAt`, and created.
 * The Plinth server and the bare baseline serve the very same PostgreSQL table.
 */
export const ENTITY_NAME = 'Order';
export const ENTITY_PATH = 'orders';
export const STATUSES = ['open', 'paid', 'shipped', 'cancelled'] as const;

export const ORDER_FIELDS = [
  { name: 'customerName', type: 'String', nullable: false },
  { name: 'status', type: 'Enum', nullable: false, values: [...STATUSES] },
  { name: 'total', type: 'Decimal', nullable: false },
  { name: 'qty', type: 'Int', nullable: false },
  // The subject the policy workloads' row filter compares with (W1P/W2P); every seeded row has the policy user's id.
  { name: 'owner', type: 'ID', nullable: true },
];

/** Rows written by the create workload carry this name prefix, so they can be removed between segments. */
export const CREATED_PREFIX = 'bench-created-';
export const SEED_PREFIX = 'bench-seed-';

export interface OrderInput {
  customerName: string;
  status: string;
  /** Decimal travels as a JSON string. */
  total: string;
  qty: number;
  owner?: string;
}

export function makeOrder(i: number, prefix: string, owner?: string): OrderInput {
  return {
    customerName: `${prefix}${i}`,
    status: STATUSES[i % STATUSES.length]!,
    total: `${(i % 500) + 1}.${String(i % 100).padStart(2, '0')}`,
    qty: (i * 7919) % 100,
    ...(owner === undefined ? {} : { owner }),
  };
}

/** W2's query string: 20 rows of one status, newest first. */
export function listQuery(status: string): string {
  return `filter=${encodeURIComponent(JSON.stringify({ status: { eq: status } }))}&sort=-createdAt&pageSize=20`;
}

/** PostgreSQL schema holding a project's entity tables on branch `main`. */
export function projectSchema(projectId: string): string {
  return `p_${projectId.replace(/-/g, '')}_main`;
}

export const qualifiedTable = (schema: string): string => `"${schema.replace(/"/g, '""')}"."${ENTITY_NAME}"`;
