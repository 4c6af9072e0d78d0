import {
  correlationHeaders, errorResponses, headerRef, jsonContent, paramRef, schemaRef, scopeHeaderParams, scopeOnlySecurity,
} from '../../publication/openapi-components.js';
import { reachableSchemaNames, registeredSchema } from './schemas.js';
import type { DeclaredOperation, Json, NamedSchema, ParamDecl, RouteDecl, TagDecl } from './types.js';

/**
 * The OpenAPI parts of declared operations: one path item operation per
 * route, the schemas they reach, their tags. runtime/publication/openapi.ts
 * puts them into the publication's document next to the entity routes.
 */
export interface DeclaredOpenApi {
  paths: Array<{ path: string; method: string; operation: Json }>;
  schemas: Json;
  tags: TagDecl[];
}

/** `branches/:name` → `/branches/{name}`. */
export const openApiPathOf = (routePath: string): string => `/${routePath.replace(/:(\w+)/g, '{$1}')}`;

export const operationIdOf = (op: DeclaredOperation, route: RouteDecl, index: number): string =>
  route.operationId ?? (index === 0 ? op.id : index === 1 ? `${op.id}Alias` : `${op.id}Alias${index}`);

function security(op: DeclaredOperation): Json[] | undefined {
  switch (op.contract.security ?? 'derived') {
    case 'scope-only':
      return scopeOnlySecurity();
    case 'none':
      return [];
    case 'any-credential':
      return ['bearerAuth', 'apiKey', 'adminToken'].map((k) => ({ [k]: [] }));
    case 'derived':
      break;
  }
  if (op.authn === 'admin') return [op.scope === 'none' ? { adminToken: [] } : { adminToken: [], tenantHeader: [], projectHeader: [] }];
  if (op.authn === 'public') return op.scope === 'project' ? scopeOnlySecurity() : [];
  // A user operation without scope headers: the scope comes from the path, the token or the query; any credential alone.
  if (op.scope === 'none') return ['bearerAuth', 'apiKey', 'adminToken'].map((k) => ({ [k]: [] }));
  return undefined;
}

const param = (name: string, where: 'path' | 'query' | 'header', d: ParamDecl): Json => ({
  name, in: where, required: where === 'path' ? true : d.required === true, description: d.description, schema: d.schema ?? { type: 'string' },
});

function parameters(op: DeclaredOperation, route: RouteDecl): Json[] {
  const c = op.contract;
  const pathNames = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  return [
    ...pathNames.map((n) => param(n, 'path', c.params?.[n] ?? { description: n })),
    ...Object.entries(c.query ?? {}).map(([n, d]) => param(n, 'query', d)),
    ...Object.entries(c.headers ?? {}).map(([n, d]) => param(n, 'header', d)),
    ...(c.sharedParams ?? []).map(paramRef),
    // `any-credential`: the scope may come from the query or a token instead, so the operation declares its own scope parameters.
    ...(op.scope === 'project' && c.security !== 'any-credential' ? scopeHeaderParams() : []),
  ];
}

function successResponse(op: DeclaredOperation): Json {
  const out = op.contract.output;
  if (out.upgrade === true) {
    return {
      description: 'Switching Protocols: the connection is upgraded to a WebSocket; the message protocol is described in docs/realtime.md.',
      headers: {
        Upgrade: { description: '`websocket`.', schema: { type: 'string' } },
        'Sec-WebSocket-Protocol': { description: 'The offered `bearer.<token>` protocol, echoed when it carried the credential.', schema: { type: 'string' } },
      },
    };
  }
  const headers: Json = { ...correlationHeaders() };
  if (out.noStore === true) headers['Cache-Control'] = { description: '`no-store`.', schema: { type: 'string' } };
  if (out.conditional === true) headers.ETag = headerRef('ETag');
  if (out.sse !== undefined) {
    const media: Json = { schema: { type: 'string' }, 'x-sse-event': out.sse.event, 'x-sse-data': schemaRef(out.sse.data.name) };
    const what = `: \`event: ${out.sse.event}\`, \`id:\` a resumable position, \`data:\` a ${out.sse.data.name} as JSON`;
    return { description: `A stream of Server-Sent Events${what}.`, headers, content: { 'text/event-stream': media } };
  }
  if (out.mediaType !== undefined) return { description: 'Success.', headers, content: { [out.mediaType]: { schema: out.body === undefined ? { type: 'string' } : schemaRef(out.body.name) } } };
  if (out.body === undefined) return { description: 'No content.', headers };
  return { description: out.status === 202 ? 'Accepted.' : 'Success.', headers, content: jsonContent(schemaRef(out.body.name)) };
}

const notModified = (): Json => ({ description: 'Not Modified: `If-None-Match` named the current `ETag`; no body.', headers: { ...correlationHeaders(), ETag: headerRef('ETag') } });

function operationObject(op: DeclaredOperation, route: RouteDecl, index: number): Json {
  const c = op.contract;
  const o: Json = { operationId: operationIdOf(op, route, index), tags: [c.tag.name], summary: route.summary ?? c.summary };
  if (c.description !== undefined) o.description = c.description;
  if (c.stability !== 'stable') o['x-stability'] = c.stability;
  if (c.stability === 'deprecated') o.deprecated = true;
  const sec = security(op);
  if (sec !== undefined) o.security = sec;
  o.parameters = parameters(op, route);
  if (c.body !== undefined) o.requestBody = { required: c.bodyOptional !== true, content: jsonContent(schemaRef(c.body.name)) };
  else if (c.rawBodyMediaType !== undefined) o.requestBody = { required: true, content: { [c.rawBodyMediaType]: { schema: c.rawBodySchema === undefined ? { type: 'string' } : schemaRef(c.rawBodySchema.name) } } };
  o.responses = {
    [String(c.output.status)]: successResponse(op),
    ...(c.output.alsoStatus === undefined ? {} : { [String(c.output.alsoStatus)]: successResponse(op) }),
    ...(c.output.conditional === true ? { '304': notModified() } : {}),
    ...errorResponses([...c.errors]),
  };
  return o;
}

/** The document parts of `ops`, in their order; `extraSchemas` resolves names the registry does not hold (shared components). */
export function declaredOpenApi(ops: readonly DeclaredOperation[], extraSchemas: Json = {}): DeclaredOpenApi {
  const paths = ops.flatMap((op) => op.contract.routes.map((r, i) => ({ path: openApiPathOf(r.path), method: r.method.toLowerCase(), operation: operationObject(op, r, i) })));
  const roots: NamedSchema[] = ops.flatMap((op) => {
    const out = op.contract.output;
    return [op.contract.body, op.contract.rawBodySchema, out.body, out.sse?.data].filter((s): s is NamedSchema => s !== undefined);
  });
  const lookup = (name: string): Json | undefined => registeredSchema(name)?.schema ?? (extraSchemas[name] as Json | undefined);
  const schemas: Json = {};
  for (const name of reachableSchemaNames(roots, lookup)) {
    const s = registeredSchema(name);
    if (s !== undefined) schemas[name] = s.schema;
  }
  const tags = new Map<string, TagDecl>();
  for (const op of ops) if (!tags.has(op.contract.tag.name)) tags.set(op.contract.tag.name, op.contract.tag);
  return { paths, schemas, tags: [...tags.values()] };
}
