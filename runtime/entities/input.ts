import { ServiceError } from '../errors/service-error.js';
import { GENERATED_FIELDS, type FieldDef } from '../publication/model.js';
import type { CompiledEntity } from './compiled-entity.js';
import { checkFieldValue, toSqlParam } from './field-values.js';

export interface RowValues {
  /** Field names in a stable order. */
  fields: FieldDef[];
  values: unknown[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Mode = 'create' | 'update' | 'replace';

/**
 * Validates a create/update/replace body against the entity, collecting
 * every problem into one 422. `update` takes any subset; `create` needs
 * each required field (non-nullable without default); `replace` sets every
 * field, absent nullable ones to null and absent defaulted ones to their default.
 */
export function validateInput(entity: CompiledEntity, body: unknown, mode: Mode, allowKeys: readonly string[] = []): RowValues {
  const reason = (r: string): string => `${entity.entityName}Validation.${r}`;
  if (!isObject(body)) {
    throw new ServiceError('VALIDATION_FAILED', reason('InvalidBody'), 'body must be a JSON object');
  }
  const errors: Array<{ field: string; reasonCode: string; message: string }> = [];
  for (const key of Object.keys(body)) {
    if (allowKeys.includes(key)) continue;
    if (entity.userFieldByName.has(key)) continue;
    if ((GENERATED_FIELDS as readonly string[]).includes(key)) {
      errors.push({ field: key, reasonCode: reason('ReadOnlyField'), message: `'${key}' is generated and cannot be set` });
    } else {
      errors.push({ field: key, reasonCode: reason('UnknownField'), message: `unknown field '${key}'` });
    }
  }
  const fields: FieldDef[] = [];
  const values: unknown[] = [];
  for (const f of entity.userFields) {
    const has = Object.prototype.hasOwnProperty.call(body, f.name);
    let v = has ? body[f.name] : undefined;
    if (!has) {
      if (mode === 'update') continue;
      if (f.default !== null) {
        if (mode === 'create') continue; // the column default applies
        v = f.default;
      } else if (f.nullable) {
        if (mode === 'create') continue;
        v = null;
      } else {
        errors.push({ field: f.name, reasonCode: reason('Required'), message: `'${f.name}' is required` });
        continue;
      }
    }
    if (v === null) {
      if (!f.nullable) {
        errors.push({ field: f.name, reasonCode: reason('Required'), message: `'${f.name}' cannot be null` });
        continue;
      }
    } else {
      const problem = checkFieldValue(f, v);
      if (problem !== null) {
        errors.push({ field: f.name, reasonCode: reason('InvalidValue'), message: `'${f.name}' ${problem}` });
        continue;
      }
    }
    fields.push(f);
    values.push(toSqlParam(f, v));
  }
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new ServiceError('VALIDATION_FAILED', first.reasonCode, first.message, { field: first.field, errors });
  }
  if (mode === 'update' && fields.length === 0 && !allowKeys.some((k) => k in body)) {
    throw new ServiceError('VALIDATION_FAILED', reason('EmptyUpdate'), 'an update needs at least one field');
  }
  return { fields, values };
}
