/** Prepared statement names for policy-shaped SQL: one name per distinct text, never reused for another text. */
const names = new Map<string, string>();
let counter = 0;
const MAX_NAMES = 10_000;

/**
 * A policy's SQL text is stable per (publication, grant set, resolvable
 * grants): `$actor` values travel as parameters. Naming it lets the
 * driver prepare it once per connection, as the no-policy read does.
 */
export function statementName(text: string): string {
  let n = names.get(text);
  if (n === undefined) {
    if (names.size >= MAX_NAMES) names.clear();
    n = `plinth_policy_${++counter}`;
    names.set(text, n);
  }
  return n;
}
