/**
 * Declared `pattern`s run on the main thread (ajv validates an operation's input before the
 * handler runs), and JavaScript's regular expressions backtrack: `^(a+)+$` against 30 `a`s
 * and a `b` takes seconds, during which no other project is served. So a declared pattern
 * may not contain what makes backtracking exponential: a quantified group that itself holds
 * a quantifier or an alternation (star height above one, `(a|aa)*`), or a backreference.
 * What is left runs in time polynomial in the input (and inputs are bounded by the body limit).
 */
export const MAX_PATTERN_CHARS = 256;

/** Why `pattern` is refused, or null when it is safe to run on request data. */
export function unsafePatternReason(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_CHARS) return `a pattern has at most ${MAX_PATTERN_CHARS} characters`;
  // Per open group: whether it holds a quantifier or an alternation so far.
  const groups: boolean[] = [];
  let lastClosedRisky = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    const quantifier = ch === '*' || ch === '+' || ch === '?' || ch === '{';
    if (quantifier && lastClosedRisky) return 'a quantified group may not itself hold a quantifier or an alternation (exponential backtracking)';
    lastClosedRisky = false;
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return 'a pattern may not use backreferences';
      i++;
    } else if (ch === '[') {
      // A character class: skip to its end (escapes inside included).
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
    } else if (ch === '(') {
      groups.push(false);
    } else if (ch === ')') {
      lastClosedRisky = groups.pop() ?? false;
      if (lastClosedRisky && groups.length > 0) groups[groups.length - 1] = true;
    } else if ((quantifier && ch !== '?') || ch === '|' || (ch === '?' && pattern[i - 1] !== '(')) {
      if (groups.length > 0) groups[groups.length - 1] = true;
    }
  }
  return null;
}
