/**
 * Setup of the authored-operations protocol tests (protocols.test.ts): the
 * handlers and their operations, declared through `POST /api/Schema/handlers`,
 * a reflection client, and JSON ↔ google.protobuf.Struct as proto-loader
 * carries it.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { DEFAULT_LIMITS, type HandlerDef, type HandlerSurface, type OperationDecl } from '../../runtime/authored/types.js';
import { CompiledPublication } from '../../runtime/publication/compiled-publication.js';
import { expectStatus } from '../support/expect.js';
import type { TestServer } from '../support/server.js';
import type { Project } from '../mcp/support.js';

interface Declared {
  name: string;
  surface: HandlerSurface;
  code: string;
  operation: OperationDecl;
}

const NUMBER_INPUT = { type: 'object', properties: { n: { type: 'integer' } } };

/** The operations every protocol test calls: an instance one, a string-returning one, one that throws, one that spins. */
export const OPERATIONS: readonly Declared[] = [
  {
    name: 'approve', surface: 'CoreHandler',
    code: 'export default async function (ctx, input) {\n  await ctx.db.orders.get(ctx.id);\n  return { ok: true, id: ctx.id, reason: input.reason };\n}\n',
    operation: {
      name: 'approve', entity: 'Order',
      input: { type: 'object', properties: { reason: { type: 'string' }, rush: { type: 'boolean' } }, required: ['reason'] },
      output: { type: 'object', properties: { ok: { type: 'boolean' }, id: { type: 'string' }, reason: { type: 'string' } }, required: ['ok'] },
    },
  },
  {
    name: 'shout', surface: 'CoreHandler',
    code: 'export default async function (ctx, input) {\n  return input.text.toUpperCase();\n}\n',
    operation: { name: 'shout', input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, output: { type: 'string' } },
  },
  { name: 'boom', surface: 'CoreHandler', code: 'export default async function () {\n  throw new Error(\'kaboom\');\n}\n', operation: { name: 'boom', input: NUMBER_INPUT } },
  { name: 'spin', surface: 'EdgeHandler', code: 'export default async function () {\n  for (;;) {}\n}\n', operation: { name: 'spin', input: NUMBER_INPUT } },
];

/** How the operations got into the serving publication. */
export type DeclaredBy = 'route' | 'pinned';

/**
 * Declares OPERATIONS through `POST /api/Schema/handlers` (sources first, as
 * source assets). Where the route does not exist yet (a branch without the
 * handlers part), the same HandlerDefs are pinned into the serving
 * publication of this node so the listings can be checked: 'pinned'.
 */
export async function declareOperations(server: TestServer, p: Project): Promise<DeclaredBy> {
  for (const h of OPERATIONS) {
    expectStatus(await p.admin.post('/api/SourceAsset/file', { path: `handlers/${h.name}.js`, content: h.code, contentType: 'text/javascript' }), 201);
  }
  let by: DeclaredBy = 'route';
  for (const h of OPERATIONS) {
    const r = await p.admin.post('/api/Schema/handlers', { name: h.name, surface: h.surface, source: `handlers/${h.name}.js`, operation: h.operation });
    if (r.status === 404 || r.status === 405) {
      by = 'pinned';
      break;
    }
    expectStatus(r, 201);
  }
  if (by === 'pinned') await pin(server, p);
  return by;
}

async function pin(server: TestServer, p: Project): Promise<void> {
  const project = await p.admin.get(`/api/ProjectRecord/${p.projectId}`);
  expectStatus(project, 200);
  const publications = server.node.services.publications;
  const cur = await publications.current(project.body.data.tenantId, p.projectId, 'main');
  const handlers: HandlerDef[] = OPERATIONS.map((h) => ({
    name: h.name, surface: h.surface, source: `handlers/${h.name}.js`, sha256: '0'.repeat(64), export: 'default', grants: [],
    limits: DEFAULT_LIMITS[h.surface], operation: h.operation, bundleSha256: '0'.repeat(64),
  }));
  // The same version: the registry keeps it until the branch's head moves (registry.ts load()).
  publications.install(new CompiledPublication({ ...cur.record, model: { ...cur.record.model, handlers } }));
}

const REFLECTION_PROTO = join(dirname(createRequire(import.meta.url).resolve('@grpc/reflection')), '..', 'proto', 'grpc', 'reflection', 'v1', 'reflection.proto');

/** Sends v1 reflection requests on one stream and collects the answers (or the stream's error). */
export function reflect(port: number, md: grpc.Metadata, requests: unknown[]): Promise<{ answers: any[]; error: grpc.ServiceError | null }> {
  const pkg: any = grpc.loadPackageDefinition(protoLoader.loadSync(REFLECTION_PROTO, { keepCase: true, longs: String, defaults: false, oneofs: true }));
  const client = new pkg.grpc.reflection.v1.ServerReflection(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    const call = client.ServerReflectionInfo(md);
    const answers: any[] = [];
    let error: grpc.ServiceError | null = null;
    call.on('data', (a: any) => answers.push(a));
    call.on('error', (e: grpc.ServiceError) => {
      error = e;
    });
    call.on('status', () => setImmediate(() => {
      client.close();
      resolve({ answers, error });
    }));
    for (const r of requests) call.write(r);
    call.end();
  });
}

/** A JSON value as a google.protobuf.Value object proto-loader encodes. */
function valueOf(v: unknown): Record<string, unknown> {
  if (v === null) return { nullValue: 'NULL_VALUE' };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(valueOf) } };
  return { structValue: structOf(v as Record<string, unknown>) };
}

export const structOf = (json: Record<string, unknown>): Record<string, unknown> =>
  ({ fields: Object.fromEntries(Object.entries(json).map(([k, v]) => [k, valueOf(v)])) });

/** A decoded Value (proto-loader with `oneofs: true` names the set member in `kind`) → JSON. */
function jsonOfValue(v: any): unknown {
  switch (v.kind) {
    case 'nullValue': return null;
    case 'numberValue': return v.numberValue;
    case 'stringValue': return v.stringValue;
    case 'boolValue': return v.boolValue;
    case 'listValue': return (v.listValue.values ?? []).map(jsonOfValue);
    case 'structValue': return jsonOfStruct(v.structValue);
    default: assert.fail(`unknown Value kind ${String(v.kind)}`);
  }
}

export const jsonOfStruct = (s: any): Record<string, unknown> =>
  Object.fromEntries(Object.entries(s?.fields ?? {}).map(([k, v]) => [k, jsonOfValue(v)]));
