/**
 * Grant patterns as (entity, verb) pairs, `*` standing for any. A grant
 * string and an envelope pattern have the same grammar, so one parse serves
 * both; a grant of another area (not `entity:`) parses to null.
 */
export interface Pattern {
  entity: string;
  verb: string;
}

export const VERBS = ['read', 'insert', 'update', 'delete'] as const;

export function parsePattern(text: string): Pattern | null {
  const first = text.indexOf(':');
  const second = text.indexOf(':', first + 1);
  if (first < 0 || second < 0 || text.slice(0, first) !== 'entity') return null;
  return { entity: text.slice(first + 1, second), verb: text.slice(second + 1) };
}

export const formatPattern = (p: Pattern): string => `entity:${p.entity}:${p.verb}`;

/** The lookup key of a pattern in the compiled sets (`Order:read`, `*:delete`). */
export const keyOf = (entity: string, verb: string): string => `${entity}:${verb}`;

const meet = (a: string, b: string): string | null => (a === '*' ? b : b === '*' || a === b ? a : null);

/** The pairs both patterns match, as one pattern; null when they share none. */
export function intersect(a: Pattern, b: Pattern): Pattern | null {
  const entity = meet(a.entity, b.entity);
  const verb = meet(a.verb, b.verb);
  return entity === null || verb === null ? null : { entity, verb };
}

/** Whether every pair `inner` matches is matched by `outer`. */
export const within = (inner: Pattern, outer: Pattern): boolean =>
  (outer.entity === '*' || outer.entity === inner.entity) && (outer.verb === '*' || outer.verb === inner.verb);

/** Whether some pair matches both. */
export const overlaps = (a: Pattern, b: Pattern): boolean => intersect(a, b) !== null;

/**
 * The pairs every list matches, as one list: the union of the pairwise
 * intersections, without patterns another one already covers. Exact, since
 * each pattern is a product of an entity set and a verb set.
 */
export function intersectLists(a: readonly Pattern[], b: readonly Pattern[]): Pattern[] {
  const out: Pattern[] = [];
  for (const x of a) for (const y of b) {
    const m = intersect(x, y);
    if (m !== null) out.push(m);
  }
  return out.filter((p, i) => !out.some((q, j) => j !== i && within(p, q) && (!within(q, p) || j < i)));
}
