/**
 * `GET /api/Explainability/authoredPublication` (CONTRACT "Sandbox and limits"; docs/authored-code.md
 * "Explain") over HTTP, the pure view it answers, and `POST /api/AuthoredRuntime/workers/reset`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken } from '../control/support.js';
import { explainAuthoredPublication } from '../../runtime/authored/explain.js';
import { DEFAULT_LIMITS, type AuthoredPool, type HandlerDef } from '../../runtime/authored/types.js';
import type { ExposureBinding } from '../../runtime/publication/exposure-binding.js';
import type { ProjectModel } from '../../runtime/publication/model.js';

const handler = (name: string, extra: Partial<HandlerDef>): HandlerDef => ({
  name, surface: 'CoreHandler', source: `src/${name}.ts`, sha256: name.padEnd(64, '0').slice(0, 64), export: 'default', grants: [],
  limits: DEFAULT_LIMITS.CoreHandler, bundleSha256: 'b'.repeat(64), ...extra,
});
const binding = (bindingId: string, capabilityId: string): ExposureBinding => ({ bindingId, capabilityId } as ExposureBinding);

describe('explainAuthoredPublication (the view)', () => {
  it('lists the handlers by name with source, sha256 and the bindings of their operation; a background handler has none', () => {
    const model = {
      entities: [],
      handlers: [
        handler('refund', { operation: { name: 'refund', input: { type: 'object' } } }),
        handler('approve', { operation: { name: 'approve', entity: 'Order', input: { type: 'object' } } }),
        handler('nightly', { surface: 'ScheduledJob' }),
        handler('peek', { surface: 'EdgeHandler', operation: { name: '', input: { type: 'object' } } }),
      ],
    } as unknown as ProjectModel;
    const bindings = [
      binding('rest:Entity.Order.List', 'Entity.Order.List'),
      binding('rest:Operation.refund', 'Operation.refund'), binding('graphql:Mutation.refund', 'Operation.refund'), binding('mcp:tool:operations.refund', 'Operation.refund'),
      binding('rest:Entity.Order.approve', 'Entity.Order.approve'),
      binding('rest:Operation.peek', 'Operation.peek'),
    ];
    const view = explainAuthoredPublication(7, model, bindings);
    assert.equal(view.publicationVersion, 7);
    assert.deepEqual(view.handlers.map((h) => h.name), ['approve', 'nightly', 'peek', 'refund']);
    const by = Object.fromEntries(view.handlers.map((h) => [h.name, h]));
    assert.deepEqual(by.refund, { name: 'refund', surface: 'CoreHandler', source: 'src/refund.ts', sha256: handler('refund', {}).sha256, bindings: ['rest:Operation.refund', 'graphql:Mutation.refund', 'mcp:tool:operations.refund'] });
    assert.deepEqual(by.approve!.bindings, ['rest:Entity.Order.approve']);
    assert.deepEqual(by.nightly!.bindings, []);
    assert.deepEqual(by.peek!.bindings, ['rest:Operation.peek'], 'operation.name defaults to the handler name');
  });

  it('a model without handlers (every publication before authored code) → no handlers', () => {
    assert.deepEqual(explainAuthoredPublication(0, { entities: [] } as unknown as ProjectModel, []), { publicationVersion: 0, handlers: [] });
  });
});

forEachBackend('authored publication and worker reset over HTTP', (backend: Backend) => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  it('GET authoredPublication → the serving publication with no handlers; ?publicationVersion= reads an older one; unknown → 404; malformed → 422', async () => {
    const { client: c } = await bootstrapProject(server.url, server.adminToken, newSlug());
    assert.deepEqual(controlData(await c.get('/api/Explainability/authoredPublication'), 200, 'Explainability', 'read'), { publicationVersion: 0, handlers: [] });
    const first = (await defineEntity(c, { entityName: 'Order', fields: [{ name: 'title', type: 'String' }] }));
    const v1 = first.data?.publicationVersion ?? first.publicationVersion;
    await defineEntity(c, { entityName: 'Customer', fields: [{ name: 'name', type: 'String' }] });
    const now = controlData(await c.get('/api/Explainability/authoredPublication'), 200);
    assert.ok(now.publicationVersion > v1);
    assert.deepEqual(now.handlers, []);
    assert.deepEqual(controlData(await c.get(`/api/Explainability/authoredPublication?publicationVersion=${v1}`), 200), { publicationVersion: v1, handlers: [] });
    expectError(await c.get('/api/Explainability/authoredPublication?publicationVersion=999'), 404, 'NOT_FOUND', 'Explainability.PublicationNotFound');
    expectStatus(await c.get('/api/Explainability/authoredPublication?publicationVersion=abc'), 422);
  });

  it('authoredPublication and workers/reset are the platform admin\'s: a project user → 403', async () => {
    const { client: c } = await bootstrapProject(server.url, server.adminToken, newSlug());
    const user = c.with({ token: await projectUserToken(c) });
    expectStatus(await user.get('/api/Explainability/authoredPublication'), 403);
    expectStatus(await user.post('/api/AuthoredRuntime/workers/reset'), 403);
  });

  it('POST workers/reset → 202 and the pool is reset; 503 AuthoredRuntime.Unavailable on a node without a pool', async () => {
    const { client: c } = await bootstrapProject(server.url, server.adminToken, newSlug());
    const services = server.node.services as { authored?: { pool: AuthoredPool } };
    const real = services.authored;
    let resets = 0;
    const pool: AuthoredPool = { invoke: () => Promise.reject(new Error('not in this test')), reset: async () => { resets++; }, close: async () => {} };
    try {
      services.authored = undefined;
      expectError(await c.post('/api/AuthoredRuntime/workers/reset'), 503, 'UNAVAILABLE', 'AuthoredRuntime.Unavailable');
      services.authored = { pool };
      assert.deepEqual(controlData(await c.post('/api/AuthoredRuntime/workers/reset'), 202, 'AuthoredRuntime', 'accepted'), { reset: true });
      assert.equal(resets, 1);
    } finally {
      services.authored = real;
    }
  });
});
