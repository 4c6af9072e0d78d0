import type { CompiledEntity } from '../entities/compiled-entity.js';
import { MCP_DESCRIBE_SPEC, type EntityDescription } from '../operations/mcp/describe.js';
import { MCP_PROMPT_BINDING_ID, mcpResourceBindingId } from '../publication/mcp-bindings.js';
import { grantView, partInvocation, publicationOf, serviceMeta, type McpRequestContext } from './context.js';
import { invalidParams, RpcFailure, serviceRpcError } from './jsonrpc.js';
import { pageOf } from './paging.js';
import { READ_SCOPE, requireScope } from './scopes.js';
import { mcpStability, refuseRetired, withNotice, type McpStability } from './stability.js';

/**
 * The schema resources, their template, the `entity.describe` prompt and
 * completion (CONTRACT: MCP resources, prompts). Every method here needs
 * the `service:project:read` scope; what an entity shows is decided by a
 * dispatched `Mcp.Entity.Describe` (grants and masks of its REST `Read`).
 */

const URI_PREFIX = 'service://schema/entities/';
export const ENTITY_TEMPLATE = `${URI_PREFIX}{entity}`;
const PROMPT = 'entity.describe';
const MIME = 'application/json';
/** MCP caps a completion answer at 100 values. */
const MAX_COMPLETIONS = 100;

const resourceOf = (e: CompiledEntity): Record<string, unknown> => ({
  uri: `${URI_PREFIX}${e.entityName}`, name: e.entityName, title: `${e.entityName} schema`, description: `Fields of the ${e.entityName} entity in the live publication.`, mimeType: MIME,
});

/** The entities the caller may read (the REST `Read` twin's grants), sorted by name. */
async function readableEntities(rc: McpRequestContext): Promise<CompiledEntity[]> {
  const pub = publicationOf(rc);
  const granted = await grantView(rc);
  return [...pub.entities.values()]
    .filter((e) => granted(pub.operations.get(`Entity.${e.entityName}.Read`)?.requiredGrants ?? [`entity:${e.entityName}:read`]))
    .sort((a, b) => (a.entityName < b.entityName ? -1 : a.entityName > b.entityName ? 1 : 0));
}

/** The entity's description as the caller may see it, or the operation's refusal as a JSON-RPC error. */
async function describe(rc: McpRequestContext, entity: string): Promise<EntityDescription> {
  const out = await rc.dispatch(partInvocation(rc, { operation: MCP_DESCRIBE_SPEC, params: { entity } }));
  if (!out.ok) {
    const e = serviceRpcError(out.error, rc.ctx.inv.correlationId);
    throw new RpcFailure(e.code, e.message, e.data);
  }
  return out.result.body as EntityDescription;
}

/** The readable entities whose schema resource is not Retired. */
async function listedEntities(rc: McpRequestContext, stability: McpStability): Promise<CompiledEntity[]> {
  return (await readableEntities(rc)).filter((e) => !stability.retired(mcpResourceBindingId(e.entityName)));
}

export async function listResources(rc: McpRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  requireScope(rc.ctx.actor, READ_SCOPE);
  const stability = await mcpStability(rc);
  const page = pageOf(await listedEntities(rc, stability), (e) => e.entityName, params.cursor);
  const resources = page.items.map((e) => withNotice(resourceOf(e), stability.notice(mcpResourceBindingId(e.entityName))));
  return { resources, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }), _meta: serviceMeta(rc) };
}

export function listResourceTemplates(rc: McpRequestContext): Record<string, unknown> {
  requireScope(rc.ctx.actor, READ_SCOPE);
  return {
    resourceTemplates: [{ uriTemplate: ENTITY_TEMPLATE, name: 'entity-schema', title: 'Entity schema', description: 'Fields of one entity in the live publication.', mimeType: MIME }],
    _meta: serviceMeta(rc),
  };
}

export async function readResource(rc: McpRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (typeof params.uri !== 'string') throw invalidParams('params.uri must be a string');
  const uri = params.uri;
  if (!uri.startsWith(URI_PREFIX) || uri.length === URI_PREFIX.length || uri.length > 512) throw invalidParams(`unknown resource: ${uri.slice(0, 200)}`);
  requireScope(rc.ctx.actor, READ_SCOPE);
  const entity = uri.slice(URI_PREFIX.length);
  const stability = await mcpStability(rc);
  refuseRetired(stability, mcpResourceBindingId(entity));
  const description = await describe(rc, entity);
  const bindingId = mcpResourceBindingId(description.entityName);
  return { contents: [{ uri, mimeType: MIME, text: JSON.stringify(description) }], _meta: serviceMeta(rc, bindingId, stability.notice(bindingId)) };
}

const PROMPT_ENTRY = { name: PROMPT, title: 'Describe an entity', description: 'Asks to describe an entity and each of its fields.', arguments: [{ name: 'entity', description: 'Entity name', required: true }] };

export async function listPrompts(rc: McpRequestContext): Promise<Record<string, unknown>> {
  requireScope(rc.ctx.actor, READ_SCOPE);
  const stability = await mcpStability(rc);
  const prompts = stability.retired(MCP_PROMPT_BINDING_ID) ? [] : [withNotice(PROMPT_ENTRY, stability.notice(MCP_PROMPT_BINDING_ID))];
  return { prompts, _meta: serviceMeta(rc) };
}

function promptText(d: EntityDescription): string {
  const lines = d.fields.map((f) => {
    const traits = [f.type, f.nullable ? 'optional' : 'required', ...(f.unique === true ? ['unique'] : []), ...(f.values === undefined ? [] : [`one of ${f.values.join(', ')}`]), ...(f.references === undefined ? [] : [`references ${f.references}`])];
    return `- ${f.name} (${traits.join(', ')})`;
  });
  return `Describe the entity ${d.entityName} (publication ${d.publicationVersion}) and what each of its fields means:\n${lines.join('\n')}`;
}

export async function getPrompt(rc: McpRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (params.name !== PROMPT) throw invalidParams(`unknown prompt: ${String(params.name).slice(0, 200)}`);
  const args = params.arguments;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) throw invalidParams('arguments must be an object');
  const entity = (args as Record<string, unknown> | undefined)?.entity;
  if (typeof entity !== 'string' || entity === '') throw invalidParams('argument \'entity\' is required');
  requireScope(rc.ctx.actor, READ_SCOPE);
  const stability = await mcpStability(rc);
  refuseRetired(stability, MCP_PROMPT_BINDING_ID);
  const description = await describe(rc, entity);
  return {
    description: `Describe ${description.entityName}`,
    messages: [{ role: 'user', content: { type: 'text', text: promptText(description) } }],
    _meta: serviceMeta(rc, MCP_PROMPT_BINDING_ID, stability.notice(MCP_PROMPT_BINDING_ID)),
  };
}

/** `completion/complete` for the template's `entity` and the prompt's `entity`: readable entity names starting with the value. */
export async function complete(rc: McpRequestContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const ref = params.ref as Record<string, unknown> | undefined;
  const argument = params.argument as Record<string, unknown> | undefined;
  if (typeof ref !== 'object' || ref === null || typeof argument !== 'object' || argument === null) throw invalidParams('params.ref and params.argument must be objects');
  if (typeof argument.name !== 'string' || typeof argument.value !== 'string') throw invalidParams('argument.name and argument.value must be strings');
  const known = (ref.type === 'ref/resource' && ref.uri === ENTITY_TEMPLATE) || (ref.type === 'ref/prompt' && ref.name === PROMPT);
  if (!known) throw invalidParams('unknown completion reference');
  requireScope(rc.ctx.actor, READ_SCOPE);
  const stability = await mcpStability(rc);
  // A retired prompt completes nothing (its get fails closed); a resource template completes only entities whose schema resource is listed.
  if (ref.type === 'ref/prompt') refuseRetired(stability, MCP_PROMPT_BINDING_ID);
  const value = argument.value;
  const candidates = argument.name !== 'entity' ? [] : ref.type === 'ref/prompt' ? await readableEntities(rc) : await listedEntities(rc, stability);
  const names = candidates.map((e) => e.entityName).filter((n) => n.startsWith(value));
  return { completion: { values: names.slice(0, MAX_COMPLETIONS), total: names.length, hasMore: names.length > MAX_COMPLETIONS }, _meta: serviceMeta(rc) };
}
