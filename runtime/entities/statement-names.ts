import { createHash } from 'node:crypto';
import type { CompiledEntity } from './compiled-entity.js';

/**
 * Names for the statements requests build (a GraphQL document's planned SQL,
 * a REST list or count, a create), so PostgreSQL parses and plans each text
 * once per connection instead of on every request: that planning was a
 * visible share of the database's CPU per list and per create.
 * A name stands for exactly one text: the hash of the text, under the
 * compiled entity's own prefix (a new publication compiles new entities,
 * so a changed column never meets an old plan). Clients choose filters,
 * sorts and documents, so the names are bounded per process; past the
 * bound, statements run unnamed (parsed each time).
 */
const MAX_NAMED = 500;
const named = new Set<string>();

/** Names by statement text: a repeated statement finds its name without hashing the text again. */
const byText = new Map<string, string>();

export function statementName(entity: CompiledEntity, text: string): string | undefined {
  const known = byText.get(text);
  if (known !== undefined && known.startsWith(`${entity.readById.name}_`)) return known;
  const name = `${entity.readById.name}_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  if (named.has(name)) return name;
  if (named.size >= MAX_NAMED) return undefined;
  named.add(name);
  byText.set(text, name);
  return name;
}
