import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { EntityArgs } from '../entities/entity-args.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import type { EntityOperation, EntityOperationKind } from '../publication/operations.js';
import { entityInputSchema } from './input-schema.js';
import { invalidParams } from './jsonrpc.js';
import { INVOKE_SCOPE, READ_SCOPE, type McpScope } from './scopes.js';
import { TOOL_KINDS, type ToolVerb } from './tool-kinds.js';

type Json = Record<string, unknown>;

/** What a tool argument may be: checked before dispatch, so a wrong type is JSON-RPC's -32602, not a service error. */
type ArgType = 'string' | 'integer' | 'boolean' | 'object' | 'names';

interface ArgDecl {
  type: ArgType;
  required?: true;
  description: string;
}

export interface McpTool {
  /** `Order.list` */
  name: string;
  verb: ToolVerb;
  entity: CompiledEntity;
  operation: EntityOperation;
  /** The MCP scope calling it needs. */
  scope: McpScope;
  args: Readonly<Record<string, ArgDecl>>;
  /** The `tools/list` entry. */
  descriptor: Json;
}

const NAMES_SCHEMA: Json = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };

const LIST_ARGS: Record<string, ArgDecl> = {
  filter: { type: 'object', description: 'Filter object, as REST\'s `filter` JSON (e.g. { "status": "paid" }).' },
  sort: { type: 'names', description: 'Sort keys as REST\'s `sort` (`-total,createdAt`), or a list of them.' },
  page: { type: 'integer', description: 'Page number, from 1.' },
  pageSize: { type: 'integer', description: 'Rows per page.' },
  cursor: { type: 'string', description: 'Keyset cursor from a previous page.' },
  includeTotal: { type: 'boolean', description: 'Also count every matching row.' },
  include: { type: 'names', description: 'Relations to include, as REST\'s `include`.' },
  fields: { type: 'names', description: 'Fields to return, as REST\'s `fields`.' },
};
const ID: ArgDecl = { type: 'string', required: true, description: 'The row id.' };
const ARGS: Record<ToolVerb, Record<string, ArgDecl>> = {
  list: LIST_ARGS,
  get: { id: ID, include: LIST_ARGS.include!, fields: LIST_ARGS.fields! },
  create: { input: { type: 'object', required: true, description: 'The new row.' }, idempotencyKey: { type: 'string', description: 'Retries with the same key write once.' } },
  update: { id: ID, input: { type: 'object', required: true, description: 'The fields to change.' }, ifMatch: { type: 'string', description: 'The row\'s concurrencyToken (REST\'s If-Match).' } },
  delete: { id: ID, force: { type: 'boolean', description: 'Hard delete of a soft-delete entity.' } },
};

const DESCRIPTIONS: Record<ToolVerb, (e: string) => string> = {
  list: (e) => `List ${e} rows (filter, sort, paging), as GET on its collection.`,
  get: (e) => `Read one ${e} row by id.`,
  create: (e) => `Create a ${e} row.`,
  update: (e) => `Change fields of a ${e} row.`,
  delete: (e) => `Delete a ${e} row.`,
};

function argSchema(d: ArgDecl): Json {
  const base: Json = d.type === 'names' ? { ...NAMES_SCHEMA } : { type: d.type };
  if (d.type === 'integer') base.minimum = 1;
  return { ...base, description: d.description };
}

function descriptorOf(name: string, verb: ToolVerb, entity: CompiledEntity, args: Record<string, ArgDecl>): Json {
  const properties: Json = {};
  for (const [k, d] of Object.entries(args)) properties[k] = argSchema(d);
  if (verb === 'create' || verb === 'update') properties.input = { ...entityInputSchema(entity.def, verb), description: args.input!.description };
  const required = Object.entries(args).filter(([, d]) => d.required === true).map(([k]) => k);
  const readOnly = verb === 'list' || verb === 'get';
  return {
    name,
    title: `${entity.entityName} ${verb}`,
    description: DESCRIPTIONS[verb](entity.entityName),
    inputSchema: { type: 'object', properties, ...(required.length === 0 ? {} : { required }), additionalProperties: false },
    annotations: { readOnlyHint: readOnly, destructiveHint: verb === 'delete', idempotentHint: verb !== 'create', openWorldHint: false },
  };
}

/** The publication's tools, sorted by name (cursors page through this order), built once per publication. */
export function toolsOf(pub: CompiledPublication): { list: readonly McpTool[]; byName: ReadonlyMap<string, McpTool> } {
  return pub.derive('mcp-tools', () => {
    const list: McpTool[] = [];
    for (const entity of pub.entities.values()) {
      for (const [verb, kind] of Object.entries(TOOL_KINDS) as Array<[ToolVerb, EntityOperationKind]>) {
        const operation = pub.operations.get(`Entity.${entity.entityName}.${kind}`);
        if (operation === undefined) continue;
        const name = `${entity.entityName}.${verb}`;
        const args = ARGS[verb];
        list.push({ name, verb, entity, operation, scope: verb === 'list' || verb === 'get' ? READ_SCOPE : INVOKE_SCOPE, args, descriptor: descriptorOf(name, verb, entity, args) });
      }
    }
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { list, byName: new Map(list.map((t) => [t.name, t])) };
  });
}

const typeOk = (t: ArgType, v: unknown): boolean => {
  switch (t) {
    case 'string': return typeof v === 'string';
    case 'integer': return typeof v === 'number' && Number.isSafeInteger(v);
    case 'boolean': return typeof v === 'boolean';
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'names': return typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
  }
};

/** Checks `arguments` against the tool's declaration: unknown names, missing or mistyped values are -32602. */
export function checkArguments(tool: McpTool, raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidParams('arguments must be an object');
  const args = raw as Record<string, unknown>;
  for (const k of Object.keys(args)) if (!Object.hasOwn(tool.args, k)) throw invalidParams(`unknown argument '${k}' for tool ${tool.name}`);
  for (const [k, d] of Object.entries(tool.args)) {
    const v = args[k];
    if (v === undefined || v === null) {
      if (d.required === true) throw invalidParams(`argument '${k}' is required for tool ${tool.name}`);
      continue;
    }
    if (!typeOk(d.type, v)) throw invalidParams(`argument '${k}' must be ${d.type === 'names' ? 'a string or a list of strings' : `a${d.type === 'integer' || d.type === 'object' ? 'n' : ''} ${d.type}`}`);
  }
  return args;
}

const names = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : Array.isArray(v) ? v.join(',') : String(v));

/** The entity operation's arguments (runtime/entities/entity-args.ts) in REST's syntax, from checked tool arguments. */
export function entityArgsOf(args: Record<string, unknown>): EntityArgs {
  const out: Record<string, string> = {};
  const put = (k: keyof EntityArgs, v: string | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  if (args.filter !== undefined && args.filter !== null) put('filter', JSON.stringify(args.filter));
  put('sort', names(args.sort));
  put('include', names(args.include));
  put('fields', names(args.fields));
  for (const k of ['page', 'pageSize', 'includeTotal', 'force'] as const) if (args[k] !== undefined && args[k] !== null) put(k, String(args[k]));
  if (typeof args.cursor === 'string') put('cursor', args.cursor);
  return out;
}
