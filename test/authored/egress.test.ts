/**
 * Egress of authored code (CONTRACT "Sandbox and limits" → Egress; docs/authored-code.md
 * "Egress"): the allow-list routes over HTTP, and the `fetch` host target against a real
 * loopback server, with and without WEBHOOK_ALLOW_PRIVATE_TARGETS.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken } from '../control/support.js';
import { authoredFetch, MAX_EGRESS_RESPONSE_BYTES } from '../../runtime/authored/egress.js';
import type { HostAnswer } from '../../runtime/authored/types.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

forEachBackend('authored egress allow-list', (backend: Backend) => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  it('GET before any PUT → 200 { allowedHosts: [], updatedAt: null }; PUT replaces the list (lower case, deduplicated) and GET reads it back', async () => {
    const { client: c } = await bootstrapProject(server.url, server.adminToken, newSlug());
    assert.deepEqual(controlData(await c.get('/api/AuthoredRuntime/egress'), 200, 'AuthoredRuntime', 'read'), { allowedHosts: [], updatedAt: null });
    const put = controlData(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: ['API.example.com', 'api.example.com', 'hooks.example.org.', '10.0.0.1', '[::1]'] }), 200, 'AuthoredRuntime', 'updated');
    assert.deepEqual(put.allowedHosts, ['api.example.com', 'hooks.example.org', '10.0.0.1', '[::1]']);
    assert.match(put.updatedAt, ISO_UTC);
    assert.deepEqual(controlData(await c.get('/api/AuthoredRuntime/egress'), 200, 'AuthoredRuntime', 'read'), put);
    const cleared = controlData(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: [] }), 200);
    assert.deepEqual(cleared.allowedHosts, []);
  });

  it('the list is per project: another project of the same tenant sees none', async () => {
    const a = await bootstrapProject(server.url, server.adminToken, newSlug());
    const b = await bootstrapProject(server.url, server.adminToken, newSlug());
    controlData(await a.client.put('/api/AuthoredRuntime/egress', { allowedHosts: ['api.example.com'] }), 200);
    assert.deepEqual(controlData(await b.client.get('/api/AuthoredRuntime/egress'), 200).allowedHosts, []);
  });

  it('an entry that is not a host name → 422 Egress.InvalidHost naming the entry; nothing is stored', async () => {
    const { client: c } = await bootstrapProject(server.url, server.adminToken, newSlug());
    for (const bad of ['https://api.example.com', 'api.example.com:443', '*.example.com', 'api.example.com/x', '-bad.com', 'a..b', '', '[nothex]']) {
      expectError(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: ['ok.example.com', bad] }), 422, 'VALIDATION_FAILED', 'Egress.InvalidHost', 'allowedHosts[1]');
    }
    expectError(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: 'api.example.com' }), 422, 'VALIDATION_FAILED', 'Egress.InvalidHost', 'allowedHosts');
    expectError(await c.put('/api/AuthoredRuntime/egress', {}), 422, 'VALIDATION_FAILED', 'Egress.InvalidHost', 'allowedHosts');
    expectError(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: [42] }), 422, 'VALIDATION_FAILED', 'Egress.InvalidHost');
    assert.deepEqual(controlData(await c.get('/api/AuthoredRuntime/egress'), 200).allowedHosts, []);
  });

  it('a project user (not the platform admin) → 403 on both routes', async () => {
    const { client: c } = await bootstrapProject(server.url, server.adminToken, newSlug());
    const user = c.with({ token: await projectUserToken(c) });
    expectStatus(await user.get('/api/AuthoredRuntime/egress'), 403);
    expectStatus(await user.put('/api/AuthoredRuntime/egress', { allowedHosts: [] }), 403);
  });
});

/** A loopback HTTP target: echoes what it got; `/big` answers more than the cap; `/redirect` redirects. */
async function startTarget(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(MAX_EGRESS_RESPONSE_BYTES + 1));
        return;
      }
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json', 'x-target': 'yes' });
      res.end(JSON.stringify({ method: req.method, url: req.url, auth: req.headers.authorization ?? null, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

const refusal = (a: HostAnswer): { code: string; reasonCode: string; status: number } => {
  assert.equal(a.ok, false, JSON.stringify(a));
  return (a as { ok: false; error: { code: string; reasonCode: string; status: number } }).error;
};

describe('authoredFetch (the ctx.fetch host target)', () => {
  let target: { server: Server; port: number };
  before(async () => {
    target = await startTarget();
  });
  after(async () => {
    await new Promise((r) => target?.server.close(r));
  });

  describe('without WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
    let server: TestServer;
    let c: Client;
    let projectId: string;
    before(async () => {
      server = await startServer();
      ({ client: c, projectId } = await bootstrapProject(server.url, server.adminToken, newSlug()));
    });
    after(async () => {
      await server?.close();
    });

    it('a host not in the allow-list → 403 ACCESS_DENIED Egress.HostNotAllowed, before any connection', async () => {
      const e = refusal(await authoredFetch(server.node.services, projectId, { target: 'fetch', args: [`http://127.0.0.1:${target.port}/x`] }));
      assert.deepEqual([e.code, e.reasonCode, e.status], ['ACCESS_DENIED', 'Egress.HostNotAllowed', 403]);
      const other = refusal(await authoredFetch(server.node.services, projectId, { target: 'fetch', args: ['https://api.example.com/v1'] }));
      assert.equal(other.reasonCode, 'Egress.HostNotAllowed');
    });

    it('a listed host that is a loopback or private address → 403 Egress.HostNotAllowed (the webhook SSRF rules)', async () => {
      controlData(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: ['127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254'] }), 200);
      for (const url of [`http://127.0.0.1:${target.port}/x`, `http://localhost:${target.port}/x`, 'http://10.1.2.3/x', 'http://169.254.169.254/latest/meta-data/']) {
        const e = refusal(await authoredFetch(server.node.services, projectId, { target: 'fetch', args: [url] }));
        assert.deepEqual([e.code, e.reasonCode, e.status], ['ACCESS_DENIED', 'Egress.HostNotAllowed', 403], url);
      }
    });

    it('a malformed call → 422 (not a URL, not http, credentials in the URL, a bad init)', async () => {
      const cases: unknown[][] = [[42], ['not a url'], ['ftp://api.example.com/'], ['http://u:p@api.example.com/'], ['http://api.example.com/', { method: 'TRACE' }],
        ['http://api.example.com/', { headers: { a: 1 } }], ['http://api.example.com/', { body: { a: 1 }, method: 'POST' }], ['http://api.example.com/', { body: 'x' }]];
      for (const args of cases) {
        const e = refusal(await authoredFetch(server.node.services, projectId, { target: 'fetch', args }));
        assert.deepEqual([e.code, e.status], ['VALIDATION_FAILED', 422], JSON.stringify(args));
      }
    });
  });

  describe('with WEBHOOK_ALLOW_PRIVATE_TARGETS=true', () => {
    let server: TestServer;
    let c: Client;
    let projectId: string;
    before(async () => {
      server = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
      ({ client: c, projectId } = await bootstrapProject(server.url, server.adminToken, newSlug()));
    });
    after(async () => {
      await server?.close();
    });

    it('a listed loopback host is fetched on any port: { status, headers, body } with the method, headers and body sent', async () => {
      controlData(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: ['127.0.0.1'] }), 200);
      const a = await authoredFetch(server.node.services, projectId, {
        target: 'fetch', args: [`http://127.0.0.1:${target.port}/orders?x=1`, { method: 'post', headers: { authorization: 'Bearer s3cret' }, body: '{"n":1}' }],
      });
      assert.equal(a.ok, true, JSON.stringify(a));
      const v = (a as { value: { status: number; headers: Record<string, string>; body: string } }).value;
      assert.equal(v.status, 201);
      assert.equal(v.headers['x-target'], 'yes');
      assert.deepEqual(JSON.parse(v.body), { method: 'POST', url: '/orders?x=1', auth: 'Bearer s3cret', body: '{"n":1}' });
    });

    it('a redirect is answered as is, never followed; a body past 5 MiB → 413 Egress.ResponseTooLarge; a closed port → 503', async () => {
      controlData(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: ['127.0.0.1'] }), 200);
      const r = await authoredFetch(server.node.services, projectId, { target: 'fetch', args: [`http://127.0.0.1:${target.port}/redirect`] });
      assert.equal(r.ok, true);
      const v = (r as { value: { status: number; headers: Record<string, string> } }).value;
      assert.equal(v.status, 302);
      assert.equal(v.headers.location, 'http://169.254.169.254/latest/meta-data/');
      const big = refusal(await authoredFetch(server.node.services, projectId, { target: 'fetch', args: [`http://127.0.0.1:${target.port}/big`] }));
      assert.deepEqual([big.code, big.reasonCode, big.status], ['PAYLOAD_TOO_LARGE', 'Egress.ResponseTooLarge', 413]);
      const closed = createServer();
      await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((res) => closed.close(res));
      const down = refusal(await authoredFetch(server.node.services, projectId, { target: 'fetch', args: [`http://127.0.0.1:${port}/`] }));
      assert.deepEqual([down.code, down.reasonCode, down.status], ['UNAVAILABLE', 'Egress.ConnectFailed', 503]);
    });

    it('even with private targets allowed, an unlisted host stays refused', async () => {
      controlData(await c.put('/api/AuthoredRuntime/egress', { allowedHosts: ['api.example.com'] }), 200);
      const e = refusal(await authoredFetch(server.node.services, projectId, { target: 'fetch', args: [`http://127.0.0.1:${target.port}/`] }));
      assert.equal(e.reasonCode, 'Egress.HostNotAllowed');
    });
  });
});
