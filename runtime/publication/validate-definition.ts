import { ErrorList } from '../errors/error-list.js';
import { validationFailed, type ServiceError } from '../errors/service-error.js';
import { ENTITY_NAME, ENUM_VALUE, FIELD_NAME, collectionName } from './naming.js';
import { FIELD_TYPES, GENERATED_FIELDS, type EntityDef, type FieldDef, type FieldType, type ProjectModel } from './model.js';
import { checkFieldValue } from '../entities/field-values.js';
import { RESERVED_COLLECTIONS, RESERVED_ENTITY_NAMES, RESERVED_FIELD_NAMES, nameProblems } from './validate-names.js';

const MAX_FIELDS = 200;
const MAX_ENUM_VALUES = 500;

export interface DefinitionProblem {
  field: string;
  reasonCode: string;
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses an entity definition body into an EntityDef, collecting every
 * problem. `model` is the project model the definition will join (for
 * references); `selfName` allows a self-reference.
 */
export function parseEntityDefinition(body: unknown, model: ProjectModel): { def?: EntityDef; problems: DefinitionProblem[]; problemCount: number } {
  // At most MAX_LISTED_ERRORS are kept, all are counted: 700,000 unknown keys must not answer 700,000 entries.
  const found = new ErrorList();
  const problems = found.listed;
  const bad = (field: string, reason: string, message: string): void => {
    found.add({ field, reasonCode: `Schema.${reason}`, message });
  };
  if (!isObject(body)) {
    bad('$', 'InvalidBody', 'definition must be a JSON object');
    return { problems, problemCount: found.count };
  }
  for (const k of Object.keys(body)) {
    if (!['entityName', 'fields', 'softDelete'].includes(k)) bad(k, 'UnknownProperty', `unknown property '${k}'`);
  }
  const entityName = body.entityName;
  if (typeof entityName !== 'string' || !ENTITY_NAME.test(entityName)) {
    bad('entityName', 'InvalidEntityName', 'entityName must match ^[A-Z][A-Za-z0-9]{0,62}$');
  } else if ((RESERVED_ENTITY_NAMES.has(entityName) || RESERVED_COLLECTIONS.has(collectionName(entityName))) && !model.entities.some((e) => e.entityName === entityName)) {
    // An entity that already exists keeps its name (an alter never renames): only new entities are refused.
    bad('entityName', 'ReservedEntityName', `'${entityName}' is reserved`);
  }
  const softDelete = body.softDelete ?? false;
  if (typeof softDelete !== 'boolean') bad('softDelete', 'InvalidSoftDelete', 'softDelete must be a boolean');
  if (!Array.isArray(body.fields)) {
    bad('fields', 'InvalidFields', 'fields must be an array');
    return { problems, problemCount: found.count };
  }
  if (body.fields.length > MAX_FIELDS) bad('fields', 'TooManyFields', `at most ${MAX_FIELDS} fields`);
  const fields: FieldDef[] = [];
  const seen = new Set<string>();
  // A field an existing entity already has keeps its name (it predates the reserved words), so the entity stays alterable.
  const existing = typeof entityName === 'string' ? model.entities.find((e) => e.entityName === entityName) : undefined;
  const kept = new Set(existing?.fields.map((f) => f.name) ?? []);
  body.fields.slice(0, MAX_FIELDS).forEach((raw, i) => {
    const at = `fields[${i}]`;
    const f = parseField(raw, at, bad, kept);
    if (f === undefined) return;
    if (seen.has(f.name)) return bad(`${at}.name`, 'DuplicateField', `field '${f.name}' is defined twice`);
    seen.add(f.name);
    if (f.references !== null && typeof entityName === 'string') {
      const target = model.entities.find((e) => e.entityName === f.references);
      if (target === undefined && f.references !== entityName) {
        bad(`${at}.references`, 'UnknownReference', `referenced entity '${f.references}' does not exist`);
      }
    }
    fields.push(f);
  });
  if (found.count > 0) return { problems, problemCount: found.count };
  const def: EntityDef = { entityName: entityName as string, fields, softDelete: softDelete as boolean };
  for (const p of nameProblems(def, model)) found.add(p);
  if (found.count > 0) return { problems, problemCount: found.count };
  return { def, problems, problemCount: 0 };
}

function parseField(raw: unknown, at: string, bad: (field: string, reason: string, message: string) => void, kept: ReadonlySet<string>): FieldDef | undefined {
  if (!isObject(raw)) {
    bad(at, 'InvalidField', 'a field must be an object');
    return undefined;
  }
  let ok = true;
  const fail = (field: string, reason: string, message: string): void => {
    ok = false;
    bad(field, reason, message);
  };
  for (const k of Object.keys(raw)) {
    if (!['name', 'type', 'nullable', 'unique', 'default', 'values', 'references'].includes(k)) fail(`${at}.${k}`, 'UnknownProperty', `unknown property '${k}'`);
  }
  const { name, type } = raw;
  if (typeof name !== 'string' || !FIELD_NAME.test(name)) fail(`${at}.name`, 'InvalidFieldName', 'field name must match ^[a-z][A-Za-z0-9]{0,62}$');
  else if ((GENERATED_FIELDS as readonly string[]).includes(name)) fail(`${at}.name`, 'ReservedFieldName', `'${name}' is a generated field`);
  else if (RESERVED_FIELD_NAMES.has(name) && !kept.has(name)) fail(`${at}.name`, 'ReservedFieldName', `'${name}' is a filter keyword`);
  if (type === 'Unspecified') fail(`${at}.type`, 'UnspecifiedKind', 'type Unspecified is never resolved; name a concrete type');
  else if (typeof type !== 'string' || !(FIELD_TYPES as readonly string[]).includes(type)) fail(`${at}.type`, 'UnknownFieldType', `type must be one of ${FIELD_TYPES.join(', ')}`);
  const nullable = raw.nullable ?? false;
  if (typeof nullable !== 'boolean') fail(`${at}.nullable`, 'InvalidNullable', 'nullable must be a boolean');
  const unique = raw.unique ?? false;
  if (typeof unique !== 'boolean') fail(`${at}.unique`, 'InvalidUnique', 'unique must be a boolean');
  let values: string[] = [];
  if (type === 'Enum') {
    if (!Array.isArray(raw.values) || raw.values.length === 0 || raw.values.length > MAX_ENUM_VALUES) {
      fail(`${at}.values`, 'InvalidEnumValues', `an Enum needs 1..${MAX_ENUM_VALUES} values`);
    } else if (!raw.values.every((v) => typeof v === 'string' && ENUM_VALUE.test(v))) {
      fail(`${at}.values`, 'InvalidEnumValues', 'enum values must match ^[A-Za-z][A-Za-z0-9_]{0,62}$');
    } else if (new Set(raw.values).size !== raw.values.length) {
      fail(`${at}.values`, 'DuplicateEnumValue', 'enum values must be distinct');
    } else values = raw.values as string[];
  } else if (raw.values !== undefined) fail(`${at}.values`, 'ValuesWithoutEnum', 'values is only allowed on Enum fields');
  let references: string | null = null;
  if (raw.references !== undefined && raw.references !== null) {
    if (type !== 'ID') fail(`${at}.references`, 'ReferenceNotId', 'a reference field must have type ID');
    else if (typeof raw.references !== 'string' || !ENTITY_NAME.test(raw.references)) fail(`${at}.references`, 'InvalidReference', 'references must name an entity');
    else references = raw.references;
  }
  if (type === 'JSON' && unique === true) fail(`${at}.unique`, 'UniqueNotSupported', 'JSON fields cannot be unique');
  let dflt: unknown = null;
  if (raw.default !== undefined && raw.default !== null && ok) {
    const msg = checkFieldValue({ type: type as FieldType, values, references } as FieldDef, raw.default);
    if (msg !== null) fail(`${at}.default`, 'InvalidDefault', `default: ${msg}`);
    else dflt = raw.default;
  }
  if (!ok) return undefined;
  return { name: name as string, type: type as FieldType, nullable: nullable as boolean, unique: unique as boolean, default: dflt, values, references };
}

export function definitionError(problems: DefinitionProblem[], problemCount = problems.length): ServiceError {
  const first = problems[0]!;
  const err = validationFailed(first.reasonCode, first.message, first.field);
  err.details.errors = problems;
  err.details.errorCount = problemCount;
  return err;
}
