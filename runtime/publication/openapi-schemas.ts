/**
 * Per-entity component schemas: read model, inputs, envelopes and enums.
 * Value rules follow runtime/entities/field-values.ts.
 */
import type { EntityDef, FieldDef, ProjectModel } from './model.js';
import { DECIMAL_PATTERN, dateTimeSchema, listEnvelope, schemaRef, singleEnvelope, uuidSchema, type Json } from './openapi-components.js';

export interface EntitySchemaNames {
  read: string;
  createInput: string;
  updateInput: string;
  replaceInput: string;
  single: string;
  list: string;
  batchUpdateItem: string;
  batchResult: string;
  /** Enum schema name per Enum field name. */
  enums: Map<string, string>;
}

const upperFirst = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Component names for every entity. Names are claimed in a fixed order
 * (shared names, then read models, then derived names in model order); a
 * taken name gets `_2`, `_3`… Entity names never contain `_`, so a suffixed
 * name cannot collide with a later entity (`Order` + entity `OrderList`).
 */
export function allocateSchemaNames(model: ProjectModel, reserved: readonly string[]): Map<string, EntitySchemaNames> {
  const taken = new Set(reserved);
  const claim = (desired: string): string => {
    let name = desired;
    for (let n = 2; taken.has(name); n++) name = `${desired}_${n}`;
    taken.add(name);
    return name;
  };
  const reads = new Map(model.entities.map((e) => [e.entityName, claim(e.entityName)]));
  const out = new Map<string, EntitySchemaNames>();
  for (const e of model.entities) {
    const n = e.entityName;
    out.set(n, {
      read: reads.get(n)!,
      createInput: claim(`${n}CreateInput`),
      updateInput: claim(`${n}UpdateInput`),
      replaceInput: claim(`${n}ReplaceInput`),
      single: claim(`${n}Single`),
      list: claim(`${n}List`),
      batchUpdateItem: claim(`${n}BatchUpdateItem`),
      batchResult: claim(`${n}BatchResult`),
      enums: new Map(e.fields.filter((f) => f.type === 'Enum').map((f) => [f.name, claim(`${n}${upperFirst(f.name)}`)])),
    });
  }
  return out;
}

type Usage = 'read' | 'create' | 'update';

/** Schema of one non-enum, non-reference value. */
function baseSchema(f: FieldDef): Json {
  switch (f.type) {
    case 'String': return { type: 'string' };
    case 'ID': return { type: 'string', minLength: 1, maxLength: 255 };
    case 'Int': return { type: 'integer', format: 'int32', minimum: -2147483648, maximum: 2147483647 };
    case 'Decimal': return { type: 'string', pattern: DECIMAL_PATTERN, description: 'Decimal as a JSON string (e.g. "12.50") so no precision is lost.' };
    case 'DateTime':
    case 'Instant': return { ...dateTimeSchema(), description: 'ISO 8601 timestamp (UTC in answers).' };
    case 'Boolean': return { type: 'boolean' };
    case 'JSON': return { description: 'Any JSON value.' };
    case 'Enum': return { type: 'string', enum: [...f.values] };
  }
}

const withNull = (schema: Json): Json => {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return schema; // JSON: already any value
};

function fieldSchema(f: FieldDef, usage: Usage, names: Map<string, EntitySchemaNames>, own: EntitySchemaNames): Json {
  let schema: Json;
  if (f.type === 'Enum') {
    const ref = schemaRef(own.enums.get(f.name)!);
    schema = f.nullable ? { anyOf: [ref, { type: 'null' }] } : ref;
  } else if (f.references !== null) {
    const target = names.get(f.references);
    if (usage === 'read' && target !== undefined) {
      schema = {
        anyOf: [uuidSchema(), schemaRef(target.read), ...(f.nullable ? [{ type: 'null' }] : [])],
        description: `Id of the related ${f.references} row; with \`include=${f.name}\` the related row itself.`,
      };
    } else {
      schema = { ...(f.nullable ? { type: ['string', 'null'] } : { type: 'string' }), format: 'uuid', description: `Id of the related ${f.references} row.` };
    }
    schema['x-references'] = f.references;
  } else {
    schema = f.nullable ? withNull(baseSchema(f)) : baseSchema(f);
  }
  if (f.unique) schema['x-unique'] = true;
  if (usage === 'create' && f.default !== null) schema.default = f.type === 'Decimal' && typeof f.default === 'number' ? String(f.default) : f.default;
  return schema;
}

function properties(e: EntityDef, usage: Usage, names: Map<string, EntitySchemaNames>): Json {
  const own = names.get(e.entityName)!;
  const props: Json = {};
  for (const f of e.fields) props[f.name] = fieldSchema(f, usage, names, own);
  return props;
}

const required = (list: string[]): Json => (list.length === 0 ? {} : { required: list });

/** Component schemas of one entity, in a fixed order. */
export function entitySchemas(e: EntityDef, names: Map<string, EntitySchemaNames>): Json {
  const n = names.get(e.entityName)!;
  const out: Json = {};
  out[n.read] = {
    type: 'object',
    description: `${e.entityName} row (read model).${e.softDelete ? ' Soft-delete entity: deleted rows are hidden; `force=true` deletes hard.' : ''}`,
    required: ['id', ...e.fields.filter((f) => !f.nullable).map((f) => f.name), 'createdAt', 'updatedAt', 'concurrencyToken'],
    properties: {
      id: uuidSchema(),
      ...properties(e, 'read', names),
      createdAt: dateTimeSchema(),
      updatedAt: dateTimeSchema(),
      concurrencyToken: { type: 'string', description: 'Opaque; changes on every write; echoed as `ETag`, sent back as `If-Match`.' },
    },
  };
  out[n.createInput] = {
    type: 'object',
    ...required(e.fields.filter((f) => !f.nullable && f.default === null).map((f) => f.name)),
    additionalProperties: false,
    properties: properties(e, 'create', names),
  };
  out[n.updateInput] = { type: 'object', additionalProperties: false, properties: properties(e, 'update', names) };
  out[n.replaceInput] = { $ref: `#/components/schemas/${n.createInput}`, description: `Full replacement of a ${e.entityName}: same shape as ${n.createInput}.` };
  out[n.batchUpdateItem] = {
    type: 'object',
    required: ['id'],
    additionalProperties: false,
    properties: { id: uuidSchema(), ...properties(e, 'update', names) },
  };
  out[n.single] = singleEnvelope(schemaRef(n.read));
  out[n.list] = listEnvelope(schemaRef(n.read));
  out[n.batchResult] = {
    type: 'object',
    required: ['data', 'meta'],
    properties: { data: { type: 'array', items: schemaRef(n.read) }, meta: schemaRef('Meta') },
  };
  for (const f of e.fields) {
    if (f.type !== 'Enum') continue;
    out[n.enums.get(f.name)!] = { type: 'string', enum: [...f.values], description: `Values of ${e.entityName}.${f.name}.` };
  }
  return out;
}
