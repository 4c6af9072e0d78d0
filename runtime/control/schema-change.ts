import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlExecutor } from '../../storage/index.js';
import { conflict, notFound, validationFailed } from '../errors/service-error.js';
import { alterEntityStatements, createEntityStatements, dropEntityStatements } from '../publication/ddl.js';
import { EMPTY_MODEL, findEntity, type EntityDef, type ProjectModel } from '../publication/model.js';
import { definitionError, parseEntityDefinition } from '../publication/validate-definition.js';
import type { PublicationRecord } from '../publication/compiled-publication.js';
import { handlersOnEntity } from '../authored/handler-plan.js';

const S = PLATFORM_SCHEMA;

export type SchemaAction = 'create' | 'alter' | 'delete';

export interface SchemaChange {
  tenantId: string;
  projectId: string;
  branch: string;
  action: SchemaAction;
  /** Entity definition (create/alter) or `{ entityName }` (delete). */
  body: unknown;
  actor: string;
  correlationId: string;
}

export interface SchemaChangeResult {
  publication: PublicationRecord;
  entityName: string;
  statements: string[];
  journalId: string;
}

export interface PlannedChange {
  entityName: string;
  before: EntityDef | null;
  after: EntityDef | null;
  model: ProjectModel;
  statements: string[];
}

/** Reads the head publication's model of a branch (locking the head row inside a transaction when `lock`). */
export async function readHead(db: SqlExecutor, projectId: string, branch: string, lock: boolean): Promise<{ version: number; schema: string; model: ProjectModel; createdAt: string | null; hash: string | null }> {
  const head = await db.query<{ head_version: string; schema_name: string }>(
    `SELECT head_version, schema_name FROM ${S}.branches WHERE project_id = $1 AND name = $2${lock ? ' FOR UPDATE' : ''}`,
    [projectId, branch],
  );
  const row = head.rows[0];
  if (row === undefined) throw notFound('Scope.BranchNotFound', 'branch not found');
  const version = Number(row.head_version);
  if (version === 0) return { version, schema: row.schema_name, model: EMPTY_MODEL, createdAt: null, hash: null };
  const pub = await db.query<{ model: ProjectModel; created_at: string; descriptor_hash: string }>(
    `SELECT model, created_at, descriptor_hash FROM ${S}.publications WHERE project_id = $1 AND branch = $2 AND version = $3`,
    [projectId, branch, version],
  );
  return { version, schema: row.schema_name, model: pub.rows[0]!.model, createdAt: pub.rows[0]!.created_at, hash: pub.rows[0]!.descriptor_hash };
}

const entityNameOf = (body: unknown): string | null => {
  const n = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).entityName : undefined;
  return typeof n === 'string' ? n : null;
};

/** Validates a change against a model and computes the new model and its DDL. Pure: touches no database. */
export function planChange(model: ProjectModel, schema: string, action: SchemaAction, body: unknown): PlannedChange {
  const name = entityNameOf(body);
  const existing = name === null ? undefined : findEntity(model, name);
  if (action === 'delete') {
    if (name === null) throw validationFailed('Schema.InvalidEntityName', 'entityName is required', 'entityName');
    if (existing === undefined) throw notFound('Schema.EntityNotFound', `entity '${name}' does not exist`);
    const users = model.entities.filter((e) => e.entityName !== name && e.fields.some((f) => f.references === name));
    if (users.length > 0) throw conflict('Schema.EntityReferenced', `'${name}' is referenced by ${users.map((e) => e.entityName).join(', ')}`, 'entityName');
    const handlers = handlersOnEntity(model, name);
    if (handlers.length > 0) throw conflict('Schema.EntityReferenced', `'${name}' has operations of handlers ${handlers.map((h) => h.name).join(', ')}; drop them first`, 'entityName');
    return { entityName: name, before: existing, after: null, model: { ...model, entities: model.entities.filter((e) => e.entityName !== name) }, statements: dropEntityStatements(schema, existing) };
  }
  const { def, problems, problemCount } = parseEntityDefinition(body, model);
  if (def === undefined) throw definitionError(problems, problemCount);
  if (action === 'create' && existing !== undefined) throw conflict('Schema.EntityExists', `entity '${def.entityName}' already exists`, 'entityName');
  if (action === 'alter' && existing === undefined) throw notFound('Schema.EntityNotFound', `entity '${def.entityName}' does not exist`);
  if (action === 'alter') {
    // A field other entities' relations rely on may not become something else silently; references into this entity only need its id.
    const statements = alterEntityStatements(schema, existing!, def);
    const entities = model.entities.map((e) => (e.entityName === def.entityName ? def : e));
    return { entityName: def.entityName, before: existing!, after: def, model: { ...model, entities }, statements };
  }
  const entities = [...model.entities, def].sort((a, b) => (a.entityName < b.entityName ? -1 : a.entityName > b.entityName ? 1 : 0));
  return { entityName: def.entityName, before: null, after: def, model: { ...model, entities }, statements: createEntityStatements(schema, def) };
}

/** DDL failures caused by existing rows become 422s that say so. */
export function mapDdlError(err: unknown): unknown {
  switch (sqlstateOf(err)) {
    case SQLSTATE.NOT_NULL_VIOLATION:
      return validationFailed('Schema.ExistingRowsViolate', 'existing rows have no value for a required field; give it a default or make it nullable');
    case SQLSTATE.UNIQUE_VIOLATION:
      return validationFailed('Schema.ExistingRowsViolate', 'existing rows have duplicate values for a field made unique');
    case SQLSTATE.CHECK_VIOLATION:
      return validationFailed('Schema.ExistingRowsViolate', 'existing rows hold enum values the new definition removes');
    case SQLSTATE.FOREIGN_KEY_VIOLATION:
      return validationFailed('Schema.ExistingRowsViolate', 'existing rows reference rows that do not exist');
    // DDL casts only default literals, so a value the database refuses is a bad default (e.g. 2024-02-30).
    case SQLSTATE.INVALID_DATETIME_FORMAT:
    case SQLSTATE.DATETIME_OUT_OF_RANGE:
    case '22009': // invalid_time_zone_displacement_value
    case SQLSTATE.NUMERIC_OUT_OF_RANGE:
    case SQLSTATE.INVALID_TEXT_REPRESENTATION:
      return validationFailed('Schema.InvalidDefault', 'the database refuses a default value of this definition');
    default:
      return err;
  }
}
