import { validationFailed } from '../errors/service-error.js';
import type { CompiledEntity } from './compiled-entity.js';

/** Parses the `fields` csv against the entity (422 on unknown names). */
export function parseFieldsParam(entity: CompiledEntity, text: string | undefined): string[] | null {
  if (text === undefined || text === '') return null;
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const n of names) {
    if (n !== 'concurrencyToken' && !entity.queryableFields.has(n)) {
      throw validationFailed('Query.UnknownField', `unknown field '${n}' in fields`, 'fields');
    }
  }
  return names;
}

/** Sparse projection: keeps `id` and the requested fields (plus included relations). */
export function project(row: Record<string, unknown>, fields: readonly string[] | null, keep: readonly string[] = []): Record<string, unknown> {
  if (fields === null) return row;
  const out: Record<string, unknown> = { id: row.id };
  for (const f of fields) out[f] = row[f];
  for (const k of keep) out[k] = row[k];
  return out;
}
