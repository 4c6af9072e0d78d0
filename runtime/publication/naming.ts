/**
 * Names derived from entity names. `Order` → `orders`, `OrderItem` →
 * `orderItems`, `Category` → `categories` (CONTRACT: Entities).
 */
const IRREGULAR: Record<string, string> = { person: 'people', child: 'children', man: 'men', woman: 'women', mouse: 'mice', goose: 'geese', tooth: 'teeth', foot: 'feet' };
const UNCOUNTABLE = new Set(['data', 'information', 'equipment', 'news', 'series', 'species', 'metadata']);

export function pluralize(word: string): string {
  const lower = word.toLowerCase();
  for (const [sing, plural] of Object.entries(IRREGULAR)) {
    if (lower.endsWith(sing)) return word.slice(0, word.length - sing.length) + matchCase(word.slice(word.length - sing.length), plural);
  }
  for (const u of UNCOUNTABLE) if (lower.endsWith(u)) return word;
  if (/[^aeiou]y$/i.test(word)) return word.slice(0, -1) + 'ies';
  if (/(s|x|z|ch|sh)$/i.test(word)) return word + 'es';
  return word + 's';
}

function matchCase(source: string, target: string): string {
  return source[0] === source[0]!.toUpperCase() ? target[0]!.toUpperCase() + target.slice(1) : target;
}

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** REST collection segment and GraphQL list field: pluralized, lower camel case. */
export const collectionName = (entityName: string): string => lowerFirst(pluralize(entityName));

export const ENTITY_NAME = /^[A-Z][A-Za-z0-9]{0,62}$/;
export const FIELD_NAME = /^[a-z][A-Za-z0-9]{0,62}$/;
export const ENUM_VALUE = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
