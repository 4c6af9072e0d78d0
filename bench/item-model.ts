/** The one entity the benchmark uses, shared by the bootstrap, the workloads and the baseline. */

export const ENTITY_NAME = 'Item';
/** REST path segment: the entity name pluralized, lower-camel-cased. */
export const ENTITY_PATH = 'items';
export const CATEGORIES = ['a', 'b', 'c', 'd'] as const;

export const ITEM_FIELDS = [
  { name: 'name', type: 'String', nullable: false },
  { name: 'category', type: 'Enum', nullable: false, values: [...CATEGORIES] },
  { name: 'price', type: 'Decimal', nullable: false },
  { name: 'qty', type: 'Int', nullable: false },
];

/** Rows written by the create workload carry this name prefix, so they can be removed afterwards. */
export const CREATED_PREFIX = 'bench-created-';
export const SEED_PREFIX = 'bench-seed-';

export interface ItemInput {
  name: string;
  category: string;
  /** Decimal travels as a JSON string. */
  price: string;
  qty: number;
}

export function makeItem(i: number, prefix: string): ItemInput {
  return {
    name: `${prefix}${i}`,
    category: CATEGORIES[i % CATEGORIES.length]!,
    price: `${(i % 500) + 1}.${String(i % 100).padStart(2, '0')}`,
    // Spread qty so the sort is not dominated by ties.
    qty: (i * 7919) % 10_000,
  };
}

export function listQuery(category: string): string {
  const filter = encodeURIComponent(JSON.stringify({ category: { eq: category } }));
  return `filter=${filter}&sort=-qty&pageSize=20`;
}

/** PostgreSQL schema holding a project's entity tables on branch `main`. */
export function projectSchema(projectId: string): string {
  return `p_${projectId.replace(/-/g, '')}_main`;
}
