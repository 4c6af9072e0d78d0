import { ServiceError } from '../errors/service-error.js';
import { grantFor } from '../publication/operations.js';
import type { FilterNode } from './ast.js';
import { parseFilter, parseFilterText, type FilterableEntity } from './parse.js';

/**
 * Read grants a parsed filter needs beyond the operation's own: a filter
 * that reaches a related entity (`{ "customer": { "secretNote": … } }`)
 * reads that entity's values (a count or a match per probe leaks them), so
 * it needs `entity:<Related>:read` exactly as `include` does. Every caller
 * that takes a filter (list, count, relation list, realtime WebSocket and
 * SSE subscriptions, later GraphQL) adds these to its stage-4 grants.
 */
export function filterGrants(node: FilterNode | null): string[] {
  const out = new Set<string>();
  const walk = (n: FilterNode): void => {
    switch (n.kind) {
      case 'and':
      case 'or':
        n.items.forEach(walk);
        break;
      case 'not':
        walk(n.item);
        break;
      case 'related':
        out.add(grantFor(n.entity, 'read'));
        walk(n.item);
        break;
      case 'cmp':
        break;
    }
  };
  if (node !== null) walk(node);
  return [...out];
}

/** A filter as a request carries it: query-string text, or JSON already decoded (a WebSocket message). */
export type FilterInput = { text: string } | { raw: unknown };

/**
 * The grants of a request's filter, decided in stage 4 before the filter is
 * judged valid. When it does not parse, the related entities it entered
 * before the fault still count: a caller without read on `Customer` gets
 * 403 for `{ "customer": { "noSuchField": … } }`, never a 422 that tells
 * which fields `Customer` has. The 422 itself comes from the operation,
 * which parses again.
 */
export function requestFilterGrants(entity: FilterableEntity, input: FilterInput | null): string[] {
  if (input === null) return [];
  const reached = new Set<string>();
  try {
    return filterGrants('text' in input ? parseFilterText(input.text, entity, reached) : parseFilter(input.raw, entity, reached));
  } catch (err) {
    if (!ServiceError.is(err)) throw err;
    return [...reached].map((e) => grantFor(e, 'read'));
  }
}
