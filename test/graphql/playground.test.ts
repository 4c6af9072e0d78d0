/**
 * `GET /graphql` (CONTRACT: GraphQL): a public GraphiQL page whose files
 * come from npm packages on this server (no CDN), absent in production.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, errorOf } from '../support/client.js';
import { startServer, type TestServer } from '../support/server.js';

let server: TestServer;
let anon: Client;

before(async () => {
  server = await startServer();
  anon = new Client(server.url);
});
after(async () => { await server.close(); });

it('serves GraphiQL without a credential, every file it loads from this origin', async () => {
  for (const path of ['/graphql', '/api/graphql', '/v1/graphql']) {
    const r = await anon.get(path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(r.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.doesNotMatch(r.text, /https?:\/\//, 'no file from another origin (the machines have no internet)');
    const files = [...r.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.equal(files.length, 5, files.join(' '));
    for (const f of files) {
      assert.ok(f.startsWith(path === '/v1/graphql' ? '/v1/graphql/assets/' : '/graphql/assets/'), f);
      const a = await anon.get(f);
      assert.equal(a.status, 200, f);
      assert.match(a.headers.get('content-type') ?? '', f.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      assert.ok(a.text.length > 1000, `${f} has content`);
    }
  }
});

it('an unknown file is a 404 envelope; in production the page is not served at all, and POST /graphql still is', async () => {
  const missing = await anon.get('/graphql/assets/..%2Fpackage.json');
  assert.equal(missing.status, 404);
  assert.equal(errorOf(missing).code, 'NOT_FOUND');
  const saved = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    const r = await anon.get('/graphql');
    assert.equal(r.status, 404);
    assert.equal(errorOf(r).reasonCode, 'Route.Unknown');
    assert.equal((await anon.get('/graphql/assets/graphiql.min.js')).status, 404);
  } finally {
    if (saved === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = saved;
  }
  const post = await new Client(server.url, { token: server.adminToken }).post('/graphql', { query: '{ __typename }' });
  assert.notEqual(post.status, 404);
});
