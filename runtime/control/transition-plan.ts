import { quoteIdent, quoteLiteral } from '../../storage/index.js';
import { notFound, validationFailed } from '../errors/service-error.js';
import { alterEntityStatements, columnType } from '../publication/ddl.js';
import { FIELD_TYPES, findEntity, type EntityDef, type FieldDef, type FieldType, type ProjectModel } from '../publication/model.js';
import { constraintName, qualifiedTable } from '../publication/sql-names.js';
import { definitionError, parseEntityDefinition } from '../publication/validate-definition.js';
import { bodyOf } from './schema-rollback.js';

/** A schema transition's checked body (CONTRACT "Schema transitions"). */
export type TransitionSpec =
  | { kind: 'renameField'; entityName: string; field: string; newName: string }
  | { kind: 'changeType'; entityName: string; field: string; toType: FieldType }
  | { kind: 'splitField'; entityName: string; field: string; into: string[]; separator: string };

export const TRANSITION_KINDS = ['renameField', 'changeType', 'splitField'] as const;
export const TRANSITION_PHASES = ['expand', 'backfill', 'contract'] as const;

/** What one publication of a transition does: the entity's definition after it and the statements that get there. */
export interface TransitionStep {
  entity: EntityDef;
  statements: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (b: Record<string, unknown>, k: string): string => {
  const v = b[k];
  if (typeof v !== 'string' || v === '') throw validationFailed('SchemaTransition.InvalidBody', `${k} must be a non-empty string`, k);
  return v;
};
/** changeType moves between these; Enum, ID and references need more than a cast. */
const CASTABLE: ReadonlySet<FieldType> = new Set(['String', 'Int', 'Decimal', 'DateTime', 'Instant', 'Boolean', 'JSON'] as FieldType[]);

/** Parses and checks a transition body against the model: 422 for a bad body or kind, 404 for an unknown entity. */
export function parseTransition(body: unknown, model: ProjectModel): TransitionSpec {
  if (!isObject(body)) throw validationFailed('SchemaTransition.InvalidBody', 'the body must be an object');
  const kind = body.kind;
  if (typeof kind !== 'string' || !(TRANSITION_KINDS as readonly string[]).includes(kind)) {
    throw validationFailed('SchemaTransition.UnknownKind', `kind must be one of ${TRANSITION_KINDS.join(', ')}`, 'kind');
  }
  const entityName = str(body, 'entityName');
  const entity = findEntity(model, entityName);
  if (entity === undefined) throw notFound('Schema.EntityNotFound', `entity '${entityName}' does not exist`);
  const field = str(body, 'field');
  const f = entity.fields.find((x) => x.name === field);
  if (f === undefined) throw validationFailed('SchemaTransition.UnknownField', `'${entityName}' has no field '${field}'`, 'field');
  let spec: TransitionSpec;
  if (kind === 'renameField') spec = { kind: 'renameField', entityName, field, newName: str(body, 'newName') };
  else if (kind === 'changeType') {
    const toType = body.toType;
    if (typeof toType !== 'string' || !(FIELD_TYPES as readonly string[]).includes(toType)) throw validationFailed('SchemaTransition.InvalidType', `toType must be one of ${FIELD_TYPES.join(', ')}`, 'toType');
    if (!CASTABLE.has(toType as FieldType) || !CASTABLE.has(f.type) || f.references !== null) throw validationFailed('SchemaTransition.TypeChangeUnsupported', `changeType supports ${[...CASTABLE].join(', ')} fields`, 'toType');
    if (toType === f.type) throw validationFailed('SchemaTransition.SameType', `'${field}' already has type ${toType}`, 'toType');
    spec = { kind: 'changeType', entityName, field, toType: toType as FieldType };
  } else {
    const into = body.into;
    if (!Array.isArray(into) || into.length < 2 || into.length > 8 || !into.every((n) => typeof n === 'string')) throw validationFailed('SchemaTransition.InvalidBody', 'into must name 2 to 8 fields', 'into');
    if (f.type !== 'String') throw validationFailed('SchemaTransition.TypeChangeUnsupported', 'only a String field can be split', 'field');
    const separator = str(body, 'separator');
    spec = { kind: 'splitField', entityName, field, into: into as string[], separator };
  }
  // The expanded definition must be a valid one (new names free, well-formed, not reserved).
  const expanded = expandedEntity(entity, spec);
  const { def, problems, problemCount } = parseEntityDefinition(bodyOf(expanded), { entities: model.entities.filter((e) => e.entityName !== entityName) });
  if (def === undefined) throw definitionError(problems, problemCount);
  return spec;
}

const plain = (f: FieldDef, name: string, type: FieldType = f.type): FieldDef => ({ ...f, name, type, nullable: true, unique: false, default: null });
const newNames = (s: TransitionSpec): string[] => (s.kind === 'renameField' ? [s.newName] : s.kind === 'splitField' ? s.into : []);
/** changeType's new values live in a column no user field can name (field names have no `__`) until contract. */
const shadowOf = (field: string): string => `${field}__next`;
/**
 * changeType's old values after contract: the old column, renamed to a name no
 * user field can have (field names have no `_`) and unique per transition, so a
 * rollback of the completed transition gives every unchanged row its old value
 * back exactly (docs/schema-journal.md "changeType keeps the old column").
 */
export const previousColumnOf = (id: string): string => `plinth_prev_${id.replace(/-/g, '')}`;

function expandedEntity(e: EntityDef, s: TransitionSpec): EntityDef {
  const f = e.fields.find((x) => x.name === s.field)!;
  if (s.kind === 'renameField') return { ...e, fields: [...e.fields, plain(f, s.newName)] };
  if (s.kind === 'splitField') return { ...e, fields: [...e.fields, ...s.into.map((n) => plain(f, n, 'String'))] };
  return e;
}

function contractedEntity(e: EntityDef, s: TransitionSpec): EntityDef {
  const f = e.fields.find((x) => x.name === s.field)!;
  if (s.kind === 'renameField') return { ...e, fields: e.fields.filter((x) => x.name !== s.field).map((x) => (x.name === s.newName ? { ...f, name: s.newName } : x)) };
  if (s.kind === 'splitField') return { ...e, fields: e.fields.filter((x) => x.name !== s.field) };
  return { ...e, fields: e.fields.map((x) => (x.name === s.field ? { ...f, type: s.toType, default: null, values: [] } : x)) };
}

const fn = (schema: string, id: string): string => `${quoteIdent(schema)}.${quoteIdent(`plinth_tr_${id.replace(/-/g, '')}`)}`;
const trigger = (id: string): string => quoteIdent(`plinth_tr_${id.replace(/-/g, '')}`);
const col = (n: string): string => quoteIdent(n);

/** The new columns' values from the old one, and the old one's from the new ones (SQL over `src.`). */
function mapping(s: TransitionSpec, src: string): { forward: Array<[string, string]>; inverse: string | null } {
  const o = `${src}.${col(s.field)}`;
  if (s.kind === 'renameField') return { forward: [[s.newName, o]], inverse: `${src}.${col(s.newName)}` };
  if (s.kind === 'changeType') return { forward: [[shadowOf(s.field), `${o}::${columnType({ type: s.toType, references: null })}`]], inverse: null };
  const sep = quoteLiteral(s.separator);
  const k = s.into.length;
  // The last part keeps the rest, separators included, so joining the parts gives the old value back.
  const forward = s.into.map((n, i): [string, string] => [n, i < k - 1 ? `(string_to_array(${o}, ${sep}))[${i + 1}]` : `NULLIF(array_to_string((string_to_array(${o}, ${sep}))[${k}:], ${sep}), '')`]);
  return { forward, inverse: `NULLIF(concat_ws(${sep}, ${s.into.map((n) => `${src}.${col(n)}`).join(', ')}), '')` };
}

/**
 * Keeps both shapes in step while the transition runs: a write that sets only
 * the new column(s) sets the old one, any other write sets the new from the old.
 * changeType's cast happens in an exception block: a value that does not cast
 * leaves the shadow NULL (contract then refuses) instead of failing the write.
 */
function triggerStatements(schema: string, id: string, e: EntityDef, s: TransitionSpec): string[] {
  const m = mapping(s, 'NEW');
  const setNew = m.forward.map(([n, expr]) => `NEW.${col(n)} := ${expr};`).join(' ');
  const newCols = m.forward.map(([n]) => col(n));
  let body: string;
  if (m.inverse === null) body = `BEGIN ${setNew} EXCEPTION WHEN others THEN ${m.forward.map(([n]) => `NEW.${col(n)} := NULL;`).join(' ')} END;`;
  else {
    const newChanged = newCols.map((c) => `NEW.${c} IS DISTINCT FROM OLD.${c}`).join(' OR ');
    const newSet = newCols.map((c) => `NEW.${c} IS NOT NULL`).join(' OR ');
    body = `IF TG_OP = 'UPDATE' AND (${newChanged}) AND NEW.${col(s.field)} IS NOT DISTINCT FROM OLD.${col(s.field)} THEN NEW.${col(s.field)} := ${m.inverse};
  ELSIF TG_OP = 'INSERT' AND NEW.${col(s.field)} IS NULL AND (${newSet}) THEN NEW.${col(s.field)} := ${m.inverse};
  ELSE ${setNew} END IF;`;
  }
  return [
    `CREATE FUNCTION ${fn(schema, id)}() RETURNS trigger LANGUAGE plpgsql AS $plinth$ BEGIN\n  ${body}\n  RETURN NEW;\nEND $plinth$`,
    `CREATE TRIGGER ${trigger(id)} BEFORE INSERT OR UPDATE ON ${qualifiedTable(schema, e.entityName)} FOR EACH ROW EXECUTE FUNCTION ${fn(schema, id)}()`,
  ];
}

const dropTrigger = (schema: string, id: string, e: { entityName: string }): string[] => [
  `DROP TRIGGER IF EXISTS ${trigger(id)} ON ${qualifiedTable(schema, e.entityName)}`,
  `DROP FUNCTION IF EXISTS ${fn(schema, id)}()`,
];

/** Expand: the new column(s) and the trigger; the publication shows both names (changeType: the model is unchanged). */
export function expandStep(schema: string, id: string, e: EntityDef, s: TransitionSpec): TransitionStep {
  const entity = expandedEntity(e, s);
  const table = qualifiedTable(schema, e.entityName);
  const add = s.kind === 'changeType'
    ? [`ALTER TABLE ${table} ADD COLUMN ${col(shadowOf(s.field))} ${columnType({ type: s.toType, references: null })}`]
    : alterEntityStatements(schema, e, entity);
  return { entity, statements: [...add, ...triggerStatements(schema, id, e, s)] };
}

/** One backfill batch: touches the next rows by id, so the trigger derives the new column(s); returns the last id. */
export function backfillBatchSql(schema: string, e: { entityName: string }, s: TransitionSpec): string {
  const table = qualifiedTable(schema, e.entityName);
  return `WITH batch AS (SELECT id FROM ${table} WHERE id > $1 ORDER BY id LIMIT $2)
    UPDATE ${table} t SET ${col(s.field)} = t.${col(s.field)} FROM batch WHERE t.id = batch.id RETURNING t.id`;
}

/** Rows whose value did not make it into the new shape (changeType: it does not cast). Contract refuses while any remain. */
export function unconvertedSql(schema: string, e: { entityName: string }, s: TransitionSpec): string | null {
  if (s.kind !== 'changeType') return null;
  return `SELECT count(*)::int AS n FROM ${qualifiedTable(schema, e.entityName)} WHERE ${col(s.field)} IS NOT NULL AND ${col(shadowOf(s.field))} IS NULL`;
}

/**
 * Contract: the publication shows only the new name. `e` is the expanded entity.
 * renameField/splitField keep the old column (loosened: nullable, no unique, no
 * default) and the trigger for a grace period, so a request still served by the
 * previous publication succeeds; `cleanupStatements` then drop them.
 * changeType swaps the columns at once (its new values need the field's name).
 */
export function contractStep(schema: string, id: string, e: EntityDef, original: FieldDef, s: TransitionSpec): TransitionStep {
  const entity = contractedEntity({ ...e, fields: e.fields.map((x) => (x.name === s.field ? original : x)) }, s);
  if (s.kind !== 'changeType') {
    const kept: EntityDef = { ...entity, fields: [...entity.fields, plain(original, original.name)] };
    return { entity, statements: alterEntityStatements(schema, { ...e, fields: e.fields.map((x) => (x.name === s.field ? original : x)) }, kept) };
  }
  const table = qualifiedTable(schema, e.entityName);
  const loose: EntityDef = { ...entity, fields: entity.fields.map((x) => (x.name === s.field ? plain(x, x.name) : x)) };
  return {
    entity,
    statements: [
      ...dropTrigger(schema, id, e),
      // The old column stays, loosened (its constraint names go to the new column) and out of every publication's sight.
      ...loosenStatements(table, e.entityName, original),
      `ALTER TABLE ${table} RENAME COLUMN ${col(s.field)} TO ${col(previousColumnOf(id))}`,
      `ALTER TABLE ${table} RENAME COLUMN ${col(shadowOf(s.field))} TO ${col(s.field)}`,
      ...alterEntityStatements(schema, loose, entity),
    ],
  };
}

/** A column loosened to what any insert satisfies: nullable, no default, no unique constraint (changeType fields have no enum check or reference). */
function loosenStatements(table: string, entityName: string, f: FieldDef): string[] {
  const out: string[] = [];
  if (f.unique) out.push(`ALTER TABLE ${table} DROP CONSTRAINT ${quoteIdent(constraintName(entityName, f.name, 'key'))}`);
  if (!f.nullable) out.push(`ALTER TABLE ${table} ALTER COLUMN ${col(f.name)} DROP NOT NULL`);
  if (f.default !== null) out.push(`ALTER TABLE ${table} ALTER COLUMN ${col(f.name)} DROP DEFAULT`);
  return out;
}

/** After the contract's grace period: the trigger and the old column go (no publication: the model no longer has them). */
export function cleanupStatements(schema: string, id: string, e: { entityName: string }, s: TransitionSpec): string[] {
  if (s.kind === 'changeType') return [];
  return [...dropTrigger(schema, id, e), `ALTER TABLE ${qualifiedTable(schema, e.entityName)} DROP COLUMN IF EXISTS ${col(s.field)}`];
}

/** Rollback while running (or a failed contract): the old shape, its values untouched all along. */
export function undoExpandStep(schema: string, id: string, current: EntityDef, original: EntityDef, s: TransitionSpec): TransitionStep {
  const drop = s.kind === 'changeType'
    ? [`ALTER TABLE ${qualifiedTable(schema, current.entityName)} DROP COLUMN IF EXISTS ${col(shadowOf(s.field))}`]
    : alterEntityStatements(schema, current, original);
  return { entity: original, statements: [...dropTrigger(schema, id, current), ...drop] };
}

/**
 * changeType's rolled-back value of a row: with the kept old column, the old
 * value itself when the current value is still what it converted to (the row's
 * field did not change since), else the current value cast back (a value
 * written after the contract). CASE keeps the casts in order: the kept value is
 * only cast when the current one is set.
 */
function restoredValue(s: TransitionSpec & { kind: 'changeType' }, oldType: string, previous: string | null): string {
  const current = col(s.field);
  if (previous === null) return `${current}::${oldType}`;
  const prev = col(previous);
  return `CASE WHEN ${current} IS NULL THEN NULL WHEN ${prev} IS NULL THEN ${current}::${oldType} WHEN ${prev}::${columnType({ type: s.toType, references: null })} = ${current} THEN ${prev} ELSE ${current}::${oldType} END`;
}

/**
 * Rollback after completion: the old column back (loose), its values from the new shape, then its constraints; the new column(s) dropped.
 * `previous`: changeType's kept old column (null for a transition completed before it was kept, or when the field changed type again since).
 */
export function undoCompletedStep(schema: string, current: EntityDef, original: EntityDef, s: TransitionSpec, previous: string | null = null): TransitionStep {
  const table = qualifiedTable(schema, current.entityName);
  const f = original.fields.find((x) => x.name === s.field)!;
  if (s.kind === 'changeType') {
    const tmp = shadowOf(s.field);
    const loose: EntityDef = { ...original, fields: original.fields.map((x) => (x.name === s.field ? plain(x, x.name) : x)) };
    return {
      entity: original,
      statements: [
        `ALTER TABLE ${table} ADD COLUMN ${col(tmp)} ${columnType(f)}`,
        `UPDATE ${table} SET ${col(tmp)} = ${restoredValue(s, columnType(f), previous)}`,
        `ALTER TABLE ${table} DROP COLUMN ${col(s.field)}`,
        ...(previous === null ? [] : [`ALTER TABLE ${table} DROP COLUMN ${col(previous)}`]),
        `ALTER TABLE ${table} RENAME COLUMN ${col(tmp)} TO ${col(s.field)}`,
        ...alterEntityStatements(schema, loose, original),
      ],
    };
  }
  const mid: EntityDef = { ...current, fields: [...current.fields, plain(f, f.name)] };
  const inverse = mapping(s, table).inverse!;
  return {
    entity: original,
    statements: [...alterEntityStatements(schema, current, mid), `UPDATE ${table} SET ${col(s.field)} = ${inverse}`, ...alterEntityStatements(schema, mid, original)],
  };
}

export { newNames };
