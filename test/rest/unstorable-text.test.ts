/**
 * Text PostgreSQL cannot store (U+0000, unpaired surrogates) is refused with
 * 422 VALIDATION_FAILED naming the field, on every surface that reaches SQL,
 * before any SQL runs: never a 500 (issue 22, finding 3).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { bootstrapProject, Client, defineEntity, errorOf, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const NUL = '\u0000';
const LONE = '\uD800';

/** 422 VALIDATION_FAILED with the reason code and `field`. */
function expectRefused(r: Reply, field: string, reasonCode = 'Request.NulCharacter'): void {
  assert.equal(r.status, 422, `expected 422, got ${r.status}: ${r.text.slice(0, 300)}`);
  const e = errorOf(r);
  assert.equal(e.code, 'VALIDATION_FAILED');
  assert.equal(e.reasonCode, reasonCode);
  assert.equal(e.field, field);
}

/**
 * One request written byte for byte on a socket (fetch refuses NUL in a
 * header value); resolves with the status code and the parsed JSON body.
 */
function rawGet(baseUrl: string, path: string, headers: Record<string, string>): Promise<Reply> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => {
      const head = [`GET ${path} HTTP/1.1`, `Host: ${u.host}`, 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      sock.write(Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'));
    });
    const parts: Buffer[] = [];
    sock.on('data', (d: Buffer) => parts.push(d));
    sock.on('error', reject);
    sock.on('close', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
      // The answer is small and sent in one piece (Content-Length), never chunked.
      let body: unknown;
      try {
        body = JSON.parse(bodyText);
      } catch {
        body = undefined;
      }
      resolve({ status, headers: new Headers(), body, text: bodyText });
    });
  });
}

forEachBackend('unstorable text (NUL, lone surrogates) → 422 naming the field', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let anon: Client;
  let project: { tenant: string; projectId: string };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    anon = p.client.with({ token: null });
    project = p;
    await defineEntity(admin, { entityName: 'Note', fields: [{ name: 'title', type: 'String', nullable: false }, { name: 'meta', type: 'JSON', nullable: true }] });
  });
  after(async () => {
    await server?.close();
  });

  it('register and login: an email with U+0000', async () => {
    expectRefused(await anon.post('/api/identity/register', { email: `x${NUL}@x.io`, password: 'correct horse battery' }), 'email');
    expectRefused(await anon.post('/api/identity/login', { email: `x${NUL}@x.io`, password: 'correct horse battery' }), 'email');
    expectRefused(await anon.post('/api/identity/login', { email: 'x@x.io', password: `pw${NUL}pw-long-enough` }), 'password');
  });

  it('a lone surrogate is refused the same way (it would be stored as U+FFFD)', async () => {
    expectRefused(await anon.post('/api/identity/register', { email: `x${LONE}@x.io`, password: 'correct horse battery' }), 'email', 'Request.LoneSurrogate');
    expectRefused(await admin.post('/api/notes', { title: `a${LONE}` }), 'title', 'Request.LoneSurrogate');
    // A surrogate pair (an emoji) is ordinary text.
    const ok = await admin.post('/api/notes', { title: 'a\uD83D\uDE00' });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.data.title, 'a\uD83D\uDE00');
  });

  it('an entity create: a value, a nested JSON value and a JSON key', async () => {
    expectRefused(await admin.post('/api/notes', { title: `a${NUL}b` }), 'title');
    expectRefused(await admin.post('/api/notes', { title: 'ok', meta: { tags: ['x', `y${NUL}`] } }), 'meta.tags[1]');
    expectRefused(await admin.post('/api/notes', { title: 'ok', meta: { [`k${NUL}`]: 1 } }), 'meta.k\\u0000');
    expectRefused(await admin.post('/api/notes', { [`ti${NUL}tle`]: 'x' }), 'ti\\u0000tle');
  });

  it('a list filter (JSON in the query string) and a query value', async () => {
    const filter = encodeURIComponent(JSON.stringify({ title: { eq: `a${NUL}` } }));
    expectRefused(await admin.get(`/api/notes?filter=${filter}`), 'filter.title.eq');
    expectRefused(await admin.get('/api/notes?sort=%00'), 'sort');
  });

  it('branch and migration-history path segments', async () => {
    expectRefused(await admin.get('/api/branches/ma%00in'), 'name');
    expectRefused(await admin.get('/api/Schema/migration-history/No%00te'), 'entityName');
  });

  it('API key names and claim values', async () => {
    expectRefused(await admin.post(`/api/projects/${project.projectId}/api-keys`, { name: `key${NUL}`, grants: ['entity:Note:read'] }), 'name');
    const reg = await anon.post('/api/identity/register', { email: 'claims@x.io', password: 'correct horse battery' });
    assert.equal(reg.status, 201, reg.text);
    const subjectId = reg.body.data.subjectId as string;
    expectRefused(await admin.put(`/api/IdentityManagement/subjects/${subjectId}/claims`, { claims: { team: `a${NUL}` } }), 'claims.team');
    expectRefused(await admin.put(`/api/IdentityManagement/subjects/${subjectId}/claims`, { claims: { [`te${NUL}am`]: 'a' } }), 'claims.te\\u0000am');
  });

  it('headers that reach SQL: a NUL never gets a 5xx (uWS drops the request before JS sees it)', async () => {
    // uWebSockets.js refuses control characters in a header value by closing the connection
    // (docs/rest-api.md, Known limitations); gRPC's HTTP/2 does the same. dispatch() checks
    // the header-borne fields of every Invocation anyway (see the unit test below).
    const scope = { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': project.tenant, 'x-service-project': 'app' };
    assert.equal((await rawGet(server.url, '/api/notes', scope)).status, 200);
    // At once: a dropped request waits out uWS's idle timeout (~10 s) before its socket closes.
    const headers = ['x-service-branch', 'x-service-tenant', 'idempotency-key'];
    const replies = await Promise.all(headers.map((header) => rawGet(server.url, '/api/notes', { ...scope, [header]: `a${NUL}b` })));
    replies.forEach((r, i) => assert.ok(r.status === 0 || r.status === 422, `${headers[i]}: ${r.status} ${r.text.slice(0, 200)}`));
  });

  it('the server still answers normally afterwards', async () => {
    const r = await admin.post('/api/notes', { title: 'plain' });
    assert.equal(r.status, 201, r.text);
  });
});
