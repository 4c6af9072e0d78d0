/**
 * The arguments of an entity operation, the same for every protocol
 * (issue 12: executors never read a protocol's raw input). Values keep the
 * contract's syntax, which CONTRACT makes every protocol's: `filter` is the
 * filter JSON as text, `sort` REST's sort syntax (`-total,placedAt`), `fields`
 * and `include` comma lists, numbers and flags as text. The REST adapter
 * copies them from its query string, gRPC from its request message (CONTRACT:
 * "the REST query parameter values verbatim"), Explainability's readPlan from
 * its body; the executor validates them against the entity, after
 * authentication, exactly as REST always has.
 */
export interface EntityArgs {
  readonly filter?: string;
  readonly sort?: string;
  readonly fields?: string;
  readonly include?: string;
  readonly pageSize?: string;
  readonly page?: string;
  /** An opaque keyset cursor (REST `cursor`, gRPC `page_token`). */
  readonly cursor?: string;
  readonly includeTotal?: string;
  /** Hard delete of a soft-delete entity (`true` / `false`). */
  readonly force?: string;
}

export const NO_ARGS: EntityArgs = Object.freeze({});

const NAMES = ['filter', 'sort', 'fields', 'include', 'pageSize', 'page', 'cursor', 'includeTotal', 'force'] as const;

/** REST: the query parameters of the same names (others are not arguments of entity operations). */
export function entityArgsOfQuery(query: ReadonlyMap<string, string>): EntityArgs {
  if (query.size === 0) return NO_ARGS;
  const out: Record<string, string> = {};
  for (const name of NAMES) {
    const v = query.get(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}
