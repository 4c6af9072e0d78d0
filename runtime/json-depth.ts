/** Deepest JSON nesting Plinth parses; deeper documents are refused before JSON.parse. */
export const MAX_JSON_DEPTH = 64;

/**
 * Linear scan for bracket depth outside strings: bounds the work JSON.parse
 * and later recursion (stringify, jsonb) can do on a hostile document.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped char
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}
