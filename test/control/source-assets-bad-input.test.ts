/**
 * Source-asset bodies, paths and query parameters fuzzed (issue 24, "Bad input and
 * faults"): whatever arrives, the answer is a success or a 4xx with the error envelope,
 * never a 5xx. Seeded: BAD_INPUT_SEED=<n> reproduces a run.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bootstrapProject, type Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData, newSlug } from './support.js';

const SEED = Number(process.env.BAD_INPUT_SEED ?? 20_261_128);

/** Any answer but a 5xx; an error carries the envelope with the header's correlationId. */
function sane(r: Reply, what: string): void {
  assert.ok(r.status < 500, `${what} → ${r.status}: ${r.text.slice(0, 300)}`);
  if (r.status >= 400) {
    assert.equal(r.body?.error?.correlationId, r.headers.get('x-service-correlation-id'), `${what}: error envelope`);
    assert.equal(typeof r.body.error.reasonCode, 'string');
  }
}

/** Paths near the rule's edges: valid segments, dots, slashes, odd characters, long runs. */
const pathArb = fc.oneof(
  fc.array(fc.constantFrom('a', 'b', '.', '..', '', '.x', 'x.', '-', '_', 'é', ' ', '%2F', '\\', '\u0000', 'a'.repeat(300)), { minLength: 1, maxLength: 4 }).map((s) => s.join('/')),
  fc.string({ maxLength: 40 }),
  fc.anything(),
);

const bodyArb = fc.oneof(
  fc.record({ path: pathArb, content: fc.oneof(fc.string(), fc.anything()) }, { requiredKeys: [] }),
  fc.record({ path: pathArb, contentBase64: fc.oneof(fc.base64String(), fc.string()), contentType: fc.oneof(fc.string(), fc.constant('text/plain')) }, { requiredKeys: [] }),
  fc.record({ path: pathArb, blob: fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string()), ifMatch: fc.string() }, { requiredKeys: [] }),
  fc.anything(),
);

forEachBackend('source assets: bad input', (backend: Backend) => {
  let server: TestServer;
  let c: Client;
  let fileId: string;
  let folderId: string;
  before(async () => {
    server = await startServer({ backend });
    c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    fileId = controlData(await c.post('/api/SourceAsset/file', { path: 'keep/a.js', content: 'a' }), 201).id;
    folderId = controlData(await c.post('/api/SourceAsset/folder', { path: 'dir' }), 201).id;
  });
  after(async () => {
    await server?.close();
  });

  it('random bodies on every JSON write route never answer 5xx', async () => {
    const routes: Array<[string, () => string]> = [
      ['POST', () => '/api/SourceAsset/folder'],
      ['POST', () => '/api/SourceAsset/file'],
      ['PUT', () => `/api/SourceAsset/file/${fileId}/content`],
      ['PUT', () => `/api/SourceAsset/file/${fileId}/rename`],
      ['PUT', () => `/api/SourceAsset/folder/${folderId}/rename`],
    ];
    await fc.assert(fc.asyncProperty(fc.nat(routes.length - 1), bodyArb, async (i, body) => {
      const [method, path] = routes[i]!;
      const text = JSON.stringify(body) ?? 'null';
      const r = await c.request(method, path(), text);
      sane(r, `${method} ${path()} ${text.slice(0, 200)}`);
      // Put things back where the other runs expect them.
      if (r.status === 200 && path().includes('/rename')) {
        const back = await c.request('PUT', path(), { path: path().includes('/folder/') ? 'dir' : 'keep/a.js' });
        sane(back, 'rename back');
      }
    }), { seed: SEED, numRuns: 150 });
  });

  it('random ids, query parameters and raw bodies never answer 5xx', async () => {
    const idArb = fc.oneof(fc.uuid(), fc.string({ maxLength: 20 }).map(encodeURIComponent), fc.constant(fileId));
    await fc.assert(fc.asyncProperty(idArb, fc.string({ maxLength: 30 }), fc.uint8Array({ maxLength: 64 }), async (id, q, bytes) => {
      const qs = encodeURIComponent(q);
      for (const [m, p] of [
        ['GET', `/api/SourceAsset/file/${id}`], ['GET', `/api/SourceAsset/file/${id}/download`], ['DELETE', `/api/SourceAsset/folder/${id}?recursive=${qs}`],
        ['GET', `/api/SourceAsset/file/by-path?path=${qs}`], ['GET', `/api/SourceAsset/file?prefix=${qs}`],
      ] as const) sane(await c.request(m, p), `${m} ${p}`);
      const up = await fetch(`${c.baseUrl}/api/SourceAsset/file/${id}/upload`, {
        method: 'PUT', body: bytes, headers: { authorization: `Bearer ${c.scope.token}`, 'x-service-tenant': c.scope.tenant!, 'x-service-project': c.scope.project!, 'if-match': q.replace(/[^\x20-\x7e]/g, '') },
      });
      assert.ok(up.status < 500, `upload ${id} → ${up.status}: ${await up.text()}`);
    }), { seed: SEED + 1, numRuns: 60 });
  });
});
