import { quoteIdent, quoteLiteral } from '../../storage/index.js';
import { validationFailed } from '../errors/service-error.js';
import type { EntityDef, FieldDef, FieldType } from './model.js';
import { constraintName, qualifiedTable } from './sql-names.js';

/** Column type per field type; the subset PostgreSQL, CockroachDB and PGlite share. */
const COLUMN_TYPE: Record<FieldType, string> = {
  ID: 'text',
  String: 'text',
  Int: 'integer',
  Decimal: 'numeric',
  DateTime: 'timestamptz',
  Instant: 'timestamptz',
  Boolean: 'boolean',
  Enum: 'text',
  JSON: 'jsonb',
};

export const columnType = (f: Pick<FieldDef, 'type' | 'references'>): string => (f.references !== null ? 'uuid' : COLUMN_TYPE[f.type]);

function defaultLiteral(f: FieldDef): string {
  const v = f.default;
  if (f.type === 'JSON') return `${quoteLiteral(JSON.stringify(v))}::jsonb`;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return String(v);
  return `${quoteLiteral(String(v))}::${columnType(f)}`;
}

function columnSql(f: FieldDef): string {
  let sql = `${quoteIdent(f.name)} ${columnType(f)}`;
  if (!f.nullable) sql += ' NOT NULL';
  if (f.default !== null) sql += ` DEFAULT ${defaultLiteral(f)}`;
  return sql;
}

const enumCheck = (e: EntityDef, f: FieldDef): string =>
  `CONSTRAINT ${quoteIdent(constraintName(e.entityName, f.name, 'check'))} CHECK (${quoteIdent(f.name)} IN (${f.values.map(quoteLiteral).join(', ')}))`;

const uniqueConstraint = (e: EntityDef, f: FieldDef): string =>
  `CONSTRAINT ${quoteIdent(constraintName(e.entityName, f.name, 'key'))} UNIQUE (${quoteIdent(f.name)})`;

const foreignKey = (schema: string, e: EntityDef, f: FieldDef): string =>
  `CONSTRAINT ${quoteIdent(constraintName(e.entityName, f.name, 'fkey'))} FOREIGN KEY (${quoteIdent(f.name)}) REFERENCES ${qualifiedTable(schema, f.references!)} (id) ON DELETE RESTRICT`;

const fkIndex = (schema: string, e: EntityDef, f: FieldDef): string =>
  `CREATE INDEX ${quoteIdent(constraintName(e.entityName, f.name, 'idx'))} ON ${qualifiedTable(schema, e.entityName)} (${quoteIdent(f.name)})`;

/**
 * Statements that create an entity's table with its constraints and indexes.
 * `foreignKeys: false` leaves the reference constraints out (their indexes
 * stay), for a caller that fills tables which reference each other in a cycle
 * and adds them afterwards with `foreignKeyStatements`.
 */
export function createEntityStatements(schema: string, e: EntityDef, opts: { foreignKeys?: boolean } = {}): string[] {
  const table = qualifiedTable(schema, e.entityName);
  const cols = [
    'id uuid PRIMARY KEY DEFAULT gen_random_uuid()',
    ...e.fields.map(columnSql),
    '"createdAt" timestamptz NOT NULL DEFAULT now()',
    '"updatedAt" timestamptz NOT NULL DEFAULT now()',
    '"concurrencyToken" uuid NOT NULL DEFAULT gen_random_uuid()',
  ];
  if (e.softDelete) cols.push('"deletedAt" timestamptz NULL');
  for (const f of e.fields) {
    if (f.unique) cols.push(uniqueConstraint(e, f));
    if (f.type === 'Enum') cols.push(enumCheck(e, f));
    if (f.references !== null && opts.foreignKeys !== false) cols.push(foreignKey(schema, e, f));
  }
  const out = [`CREATE TABLE ${table} (\n  ${cols.join(',\n  ')}\n)`];
  // The default list order (createdAt, id) is also the cursor key.
  out.push(`CREATE INDEX ${quoteIdent(constraintName(e.entityName, 'createdAt_id', 'idx'))} ON ${table} ("createdAt", id)`);
  for (const f of e.fields) if (f.references !== null) out.push(fkIndex(schema, e, f));
  return out;
}

/** The reference constraints `createEntityStatements` leaves out with `foreignKeys: false` (same names: errors map to fields by them). */
export const foreignKeyStatements = (schema: string, e: EntityDef): string[] =>
  e.fields.filter((f) => f.references !== null).map((f) => `ALTER TABLE ${qualifiedTable(schema, e.entityName)} ADD ${foreignKey(schema, e, f)}`);

export const dropEntityStatements = (schema: string, e: EntityDef): string[] => [`DROP TABLE ${qualifiedTable(schema, e.entityName)}`];

/**
 * Statements that move an entity's table from `before` to `after`. Type
 * changes are refused (422): a real migration of values needs an explicit
 * transition, which a later issue adds.
 */
export function alterEntityStatements(schema: string, before: EntityDef, after: EntityDef): string[] {
  const table = qualifiedTable(schema, after.entityName);
  const alter = (clause: string): string => `ALTER TABLE ${table} ${clause}`;
  const out: string[] = [];
  const old = new Map(before.fields.map((f) => [f.name, f]));
  const next = new Map(after.fields.map((f) => [f.name, f]));
  for (const f of before.fields) {
    if (!next.has(f.name)) out.push(alter(`DROP COLUMN ${quoteIdent(f.name)}`));
  }
  for (const f of after.fields) {
    const o = old.get(f.name);
    if (o === undefined) {
      out.push(alter(`ADD COLUMN ${columnSql(f)}`));
      if (f.unique) out.push(alter(`ADD ${uniqueConstraint(after, f)}`));
      if (f.type === 'Enum') out.push(alter(`ADD ${enumCheck(after, f)}`));
      if (f.references !== null) {
        out.push(alter(`ADD ${foreignKey(schema, after, f)}`));
        out.push(fkIndex(schema, after, f));
      }
      continue;
    }
    if (o.type !== f.type) {
      throw validationFailed('Schema.TypeChangeUnsupported', `field '${f.name}' cannot change type from ${o.type} to ${f.type}; add a new field instead`, f.name);
    }
    if ((o.references === null) !== (f.references === null)) {
      throw validationFailed('Schema.TypeChangeUnsupported', `field '${f.name}' cannot ${f.references === null ? 'stop' : 'start'} being a reference (uuid vs text column); add a new field instead`, f.name);
    }
    const col = quoteIdent(f.name);
    if (o.nullable !== f.nullable) out.push(alter(`ALTER COLUMN ${col} ${f.nullable ? 'DROP' : 'SET'} NOT NULL`));
    if (JSON.stringify(o.default) !== JSON.stringify(f.default)) {
      out.push(alter(`ALTER COLUMN ${col} ${f.default === null ? 'DROP DEFAULT' : `SET DEFAULT ${defaultLiteral(f)}`}`));
    }
    if (o.unique !== f.unique) {
      out.push(f.unique ? alter(`ADD ${uniqueConstraint(after, f)}`) : alter(`DROP CONSTRAINT ${quoteIdent(constraintName(after.entityName, f.name, 'key'))}`));
    }
    if (f.type === 'Enum' && o.values.join('\u0001') !== f.values.join('\u0001')) {
      out.push(alter(`DROP CONSTRAINT ${quoteIdent(constraintName(after.entityName, f.name, 'check'))}`));
      out.push(alter(`ADD ${enumCheck(after, f)}`));
    }
    if (o.references !== f.references) {
      out.push(alter(`DROP CONSTRAINT ${quoteIdent(constraintName(after.entityName, f.name, 'fkey'))}`));
      out.push(alter(`ADD ${foreignKey(schema, after, f)}`));
    }
  }
  if (before.softDelete !== after.softDelete) {
    if (after.softDelete) out.push(alter('ADD COLUMN "deletedAt" timestamptz NULL'));
    else {
      // Turning soft delete off purges the soft-deleted rows; keeping them would bring them back to life.
      out.push(`DELETE FROM ${table} WHERE "deletedAt" IS NOT NULL`, alter('DROP COLUMN "deletedAt"'));
    }
  }
  return out;
}
