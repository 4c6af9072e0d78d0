/**
 * Issue 24 "Done when": the route probe finds every `/api/SourceAsset`, `/api/AuthoredRuntime`,
 * authored-operation and handler route the spec and CONTRACT "Authored code" list: each answers
 * something other than Route.Unknown or Route.MethodNotAllowed, never a 5xx, under /api and /v1.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { publishHandler } from './publish.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const ID = randomUUID();

const AUTHORED_ROUTES: Array<[string, string]> = [
  ['POST', 'SourceAsset/folder'], ['GET', 'SourceAsset/folder'], ['PUT', `SourceAsset/folder/${ID}/rename`], ['DELETE', `SourceAsset/folder/${ID}`],
  ['POST', 'SourceAsset/file'], ['GET', 'SourceAsset/file'], ['GET', `SourceAsset/file/${ID}`], ['GET', 'SourceAsset/file/by-path?path=a.js'],
  ['PUT', `SourceAsset/file/${ID}/content`], ['PUT', `SourceAsset/file/${ID}/rename`], ['DELETE', `SourceAsset/file/${ID}`],
  ['PUT', `SourceAsset/file/${ID}/upload`], ['POST', 'SourceAsset/blob'], ['GET', `SourceAsset/file/${ID}/download`],
  ['GET', 'SourceAsset/tree'], ['GET', 'SourceAsset/scope/shape'],
  ['POST', 'AuthoredRuntime/workers/reset'], ['GET', 'AuthoredRuntime/egress'], ['PUT', 'AuthoredRuntime/egress'],
  ['GET', 'Explainability/authoredPublication'],
  ['POST', 'Schema/handlers'], ['GET', 'Schema/handlers'], ['GET', 'Schema/handlers/nothing'], ['PUT', 'Schema/handlers/nothing'], ['DELETE', 'Schema/handlers/nothing'],
  ['POST', 'operations/nothing'], ['POST', `things/${ID}/touch`],
];

forEachBackend('route coverage: authored code', (backend: Backend) => {
  let server: TestServer;
  let scoped: Client;
  before(async () => {
    server = await startServer({ backend });
    scoped = (await bootstrapProject(server.url, server.adminToken)).client;
    await defineEntity(scoped, { entityName: 'Thing', fields: [{ name: 'n', type: 'Int', nullable: true }] });
    // An instance operation: `POST /things/{id}/touch` is it, not a relation (an unknown row is its 404).
    await publishHandler(scoped, { name: 'touch', code: 'export default async (ctx) => ctx.id;', operation: { entity: 'Thing', input: { type: 'object' } } });
  });
  after(async () => {
    await server?.close();
  });

  it(`every one of the ${AUTHORED_ROUTES.length} authored-code routes is routed, under /api and /v1`, async () => {
    const unrouted: string[] = [];
    for (const base of ['/api', '/v1']) {
      for (const [method, tail] of AUTHORED_ROUTES) {
        const r = await scoped.request(method, `${base}/${tail}`, method === 'POST' || method === 'PUT' ? {} : undefined);
        const reason = r.body?.error?.reasonCode;
        assert.ok(r.status < 500 || (tail === 'AuthoredRuntime/workers/reset' && r.status === 503), `${method} ${base}/${tail} answered ${r.status} ${r.text.slice(0, 200)}`);
        if (reason === 'Route.Unknown' || reason === 'Route.MethodNotAllowed') unrouted.push(`${method} ${base}/${tail}`);
      }
    }
    assert.deepEqual(unrouted, []);
    // An unknown operation is the operation's own 404, not an unknown route.
    assert.equal((await scoped.post('/api/operations/nothing', {})).body.error.reasonCode, 'Operation.Unknown');
    assert.equal((await scoped.get('/api/AuthoredRuntime/nothing-here')).body.error.reasonCode, 'Route.Unknown');
    assert.equal((await scoped.post(`/api/things/${ID}/nothing`, {})).body.error.reasonCode, 'Route.Unknown', 'neither an operation nor a relation');
  });
});
