import { validationFailed } from '../errors/service-error.js';

/** CONTRACT "Source assets": at most 512 characters. */
export const MAX_PATH_LENGTH = 512;

/** `/`-separated segments of `[A-Za-z0-9._-]`, none of them `.` or `..`, no leading `/` (so no empty segment either). */
const SEGMENT = String.raw`(?!\.\.?(?:/|$))[A-Za-z0-9._-]+`;
export const ASSET_PATH_PATTERN = `^${SEGMENT}(?:/${SEGMENT})*$`;
const ASSET_PATH = new RegExp(ASSET_PATH_PATTERN);

export const isAssetPath = (p: unknown): p is string => typeof p === 'string' && p.length <= MAX_PATH_LENGTH && ASSET_PATH.test(p);

/** The path, or 422 `SourceAsset.InvalidPath` naming `field` (query parameters are not checked by a body schema). */
export function requirePath(p: unknown, field = 'path'): string {
  if (!isAssetPath(p)) throw validationFailed('SourceAsset.InvalidPath', `'${field}' must be /-separated segments of [A-Za-z0-9._-], no '.' or '..' segment, no leading '/', at most ${MAX_PATH_LENGTH} characters`, field);
  return p;
}

/** Every ancestor folder of a path, outermost first: `a/b/c` → `a`, `a/b`. */
export function ancestorsOf(path: string): string[] {
  const segs = path.split('/');
  return segs.slice(0, -1).map((_, i) => segs.slice(0, i + 1).join('/'));
}

