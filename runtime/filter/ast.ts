/**
 * The one filter shape (CONTRACT: Entities):
 *   { "<field>": { "<op>": value }, "and": [ … ], "or": [ … ], "not": { … } }
 * A reference field nests a filter on the related entity.
 * Parsed once into this tree, then compiled to SQL (entities) or evaluated
 * in memory (events, later).
 */
export const COMPARISON_OPS = ['eq', 'ne', 'gt', 'lt', 'in', 'between', 'like', 'isNull'] as const;
export type ComparisonOp = (typeof COMPARISON_OPS)[number];

export type FilterNode =
  | { kind: 'and'; items: FilterNode[] }
  | { kind: 'or'; items: FilterNode[] }
  | { kind: 'not'; item: FilterNode }
  | { kind: 'cmp'; field: string; op: ComparisonOp; value: unknown }
  | { kind: 'related'; field: string; entity: string; item: FilterNode };

/** Bounds that keep a filter cheap to parse and plan, enforced before any SQL. */
export const FILTER_LIMITS = {
  maxDepth: 8,
  maxNodes: 200,
  maxInValues: 1000,
  maxLikeLength: 256,
  /** Raw filter text accepted from a query string. */
  maxTextBytes: 16 * 1024,
} as const;
