/** Inline `content` is shown for text files of at most 1 MiB (CONTRACT "Source assets"). */
export const MAX_INLINE_BYTES = 1024 * 1024;

const TEXT_TYPES = new Set(['application/javascript', 'application/x-javascript', 'application/ecmascript', 'application/typescript', 'application/x-typescript', 'application/json']);

/** Text as CONTRACT means it: `text/*`, JavaScript, TypeScript or JSON (`+json` suffixes too). Parameters (`charset`) are ignored. */
export function isTextType(contentType: string): boolean {
  const t = contentType.split(';')[0]!.trim().toLowerCase();
  return t.startsWith('text/') || TEXT_TYPES.has(t) || t.endsWith('+json');
}

const BY_EXTENSION: Record<string, string> = {
  js: 'text/javascript', mjs: 'text/javascript', cjs: 'text/javascript',
  ts: 'application/typescript', mts: 'application/typescript', cts: 'application/typescript',
  json: 'application/json', md: 'text/markdown', txt: 'text/plain', html: 'text/html', css: 'text/css',
  csv: 'text/csv', svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', wasm: 'application/wasm',
};

/**
 * The type a file gets when its body names none: by extension, else `text/plain` for a
 * body sent as `content` (it is text) and `application/octet-stream` for bytes.
 */
export function defaultContentType(path: string, sentAsText: boolean): string {
  const dot = path.lastIndexOf('.');
  const ext = dot > path.lastIndexOf('/') ? path.slice(dot + 1).toLowerCase() : '';
  return BY_EXTENSION[ext] ?? (sentAsText ? 'text/plain' : 'application/octet-stream');
}
