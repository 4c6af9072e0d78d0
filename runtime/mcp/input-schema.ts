import type { EntityDef, FieldDef } from '../publication/model.js';

type Json = Record<string, unknown>;

/** A field's value as JSON Schema (the wire types of REST's bodies: Decimal as a string, timestamps ISO 8601). */
function valueSchema(f: FieldDef): Json {
  switch (f.type) {
    case 'String': return { type: 'string' };
    case 'ID': return f.references === null ? { type: 'string' } : { type: 'string', format: 'uuid', description: `Id of the related ${f.references} row.` };
    case 'Int': return { type: 'integer', minimum: -2147483648, maximum: 2147483647 };
    case 'Decimal': return { type: 'string', description: 'Decimal as a JSON string (e.g. "12.50").' };
    case 'DateTime':
    case 'Instant': return { type: 'string', format: 'date-time' };
    case 'Boolean': return { type: 'boolean' };
    case 'JSON': return {};
    case 'Enum': return { type: 'string', enum: [...f.values] };
  }
}

function fieldSchema(f: FieldDef): Json {
  const s = valueSchema(f);
  if (!f.nullable || f.type === 'JSON') return s;
  const out: Json = { ...s, type: [s.type, 'null'] };
  if (Array.isArray(s.enum)) out.enum = [...(s.enum as string[]), null];
  return out;
}

/**
 * The `input` object of `<Entity>.create` / `.update` (CONTRACT: MCP tools):
 * the entity's fields, the required ones (not nullable, no default) in
 * `required` for create, an enum field's members in `enum`.
 */
export function entityInputSchema(def: EntityDef, usage: 'create' | 'update'): Json {
  const properties: Json = {};
  for (const f of def.fields) properties[f.name] = fieldSchema(f);
  const required = usage === 'create' ? def.fields.filter((f) => !f.nullable && f.default === null).map((f) => f.name) : [];
  return { type: 'object', properties, ...(required.length === 0 ? {} : { required }), additionalProperties: false };
}
