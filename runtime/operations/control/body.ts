import { validationFailed } from '../../errors/service-error.js';

type Kind = 'string' | 'boolean' | 'object' | 'uuid?' | 'string?' | 'object?';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Validates a small control-plane body against a field→kind map: unknown
 * properties, missing required ones and wrong types are 422s naming the field.
 */
export function readBody<T extends Record<string, unknown>>(body: unknown, shape: Record<string, Kind>, block: string): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw validationFailed(`${block}.InvalidBody`, 'body must be a JSON object');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!(k in shape)) throw validationFailed(`${block}.UnknownProperty`, `unknown property '${k}'`, k);
  for (const [k, kind] of Object.entries(shape)) {
    const v = b[k];
    const optional = kind.endsWith('?');
    if (v === undefined || (optional && v === null)) {
      if (!optional) throw validationFailed(`${block}.MissingProperty`, `'${k}' is required`, k);
      continue;
    }
    const base = kind.replace('?', '');
    const ok = base === 'uuid' ? typeof v === 'string' && UUID.test(v) : base === 'object' ? typeof v === 'object' && v !== null && !Array.isArray(v) : typeof v === base;
    if (!ok) throw validationFailed(`${block}.InvalidProperty`, `'${k}' must be ${base === 'uuid' ? 'a UUID' : `a ${base}`}`, k);
    if (typeof v === 'string' && (v.length > 200 || v.includes('\u0000'))) throw validationFailed(`${block}.InvalidProperty`, `'${k}' is too long or has NUL characters`, k);
  }
  return b as T;
}

export const NAME_MAX = 200;
