/**
 * Declared `pattern`s run on the main thread: one that can backtrack exponentially is refused
 * at declaration (runtime/authored/safe-pattern.ts), through the real route too.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { unsafePatternReason } from '../../runtime/authored/safe-pattern.js';
import { bootstrapProject, type Client } from '../support/client.js';
import { startServer, type TestServer } from '../support/server.js';
import { expectError } from '../support/expect.js';
import { controlData, newSlug } from '../control/support.js';

it('refuses nested quantifiers, quantified alternations, backreferences and long patterns; keeps the usual ones', () => {
  for (const bad of ['^(a+)+$', '(a*)*', '(a|aa)*', '((ab)*c)+', '(x+){2,}', '(\\w+\\s?)*$', '(a)\\1', '(?<n>a)\\k<n>', 'a'.repeat(257)]) {
    assert.notEqual(unsafePatternReason(bad), null, bad);
  }
  for (const ok of ['^[A-Z]{3}$', '^\\d+$', '^[a-z0-9._-]+@[a-z0-9.-]+$', '^(?:foo|bar)$', '^(ab)+$', '[(+*)]+', '^\\(\\d+\\)*$', 'colou?r', '^(?=.*\\d).{8,}$']) {
    assert.equal(unsafePatternReason(ok), null, ok);
  }
});

let server: TestServer;
let c: Client;
before(async () => {
  server = await startServer({ backend: 'pglite' });
  c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
});
after(async () => {
  await server?.close();
});

it('POST /api/Schema/handlers with an exponential pattern → 422 Handler.InvalidOperationSchema naming it; nothing is published', async () => {
  controlData(await c.post('/api/SourceAsset/file', { path: 'h.js', content: 'export default async (ctx, input) => input;' }), 201);
  const before = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
  const r = await c.post('/api/Schema/handlers', {
    name: 'slow', surface: 'CoreHandler', source: 'h.js',
    operation: { input: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } },
  });
  expectError(r, 422, 'VALIDATION_FAILED', 'Handler.InvalidOperationSchema');
  assert.match(r.body.error.field, /pattern$/);
  assert.equal(controlData(await c.get('/api/branches/main'), 200).head.publicationVersion, before);
});
