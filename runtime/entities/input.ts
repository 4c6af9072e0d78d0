import { ErrorList } from '../errors/error-list.js';
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
 * its problems into one 422 (at most MAX_LISTED_ERRORS listed, all counted). `update` takes any subset; `create` needs
 * each required field (non-nullable without default); `replace` sets every
 * field, absent nullable ones to null and absent defaulted ones to their default.
 */
export function validateInput(entity: CompiledEntity, body: unknown, mode: Mode, allowKeys: readonly string[] = []): RowValues {
  const reason = (r: string): string => `${entity.entityName}Validation.${r}`;
  if (!isObject(body)) {
    throw new ServiceError('VALIDATION_FAILED', reason('InvalidBody'), 'body must be a JSON object');
  }
  const errors = new ErrorList();
  for (const key of Object.keys(body)) {
    if (allowKeys.includes(key)) continue;
    if (entity.userFieldByName.has(key)) continue;
    // Past the bound, a key is only counted: no message is built for 700,000 unknown keys.
    if ((GENERATED_FIELDS as readonly string[]).includes(key)) {
      errors.add(() => ({ field: key, reasonCode: reason('ReadOnlyField'), message: `'${key}' is generated and cannot be set` }));
    } else {
      errors.add(() => ({ field: key, reasonCode: reason('UnknownField'), message: `unknown field '${key}'` }));
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
        errors.add({ field: f.name, reasonCode: reason('Required'), message: `'${f.name}' is required` });
        continue;
      }
    }
    if (v === null) {
      if (!f.nullable) {
        errors.add({ field: f.name, reasonCode: reason('Required'), message: `'${f.name}' cannot be null` });
        continue;
      }
    } else {
      const problem = checkFieldValue(f, v);
      if (problem !== null) {
        errors.add({ field: f.name, reasonCode: reason('InvalidValue'), message: `'${f.name}' ${problem}` });
        continue;
      }
    }
    fields.push(f);
    values.push(toSqlParam(f, v));
  }
  const failed = errors.toError();
  if (failed !== null) throw failed;
  if (mode === 'update' && fields.length === 0 && !allowKeys.some((k) => k in body)) {
    throw new ServiceError('VALIDATION_FAILED', reason('EmptyUpdate'), 'an update needs at least one field');
  }
  return { fields, values };
}
