/**
 * Handler declaration bodies and names fuzzed (issue 24, "Bad input and faults"): whatever
 * arrives, the answer is a success or a 4xx with the error envelope, never a 5xx.
 * Seeded: BAD_INPUT_SEED=<n> reproduces a run.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bootstrapProject, defineEntity, type Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData, newSlug } from '../control/support.js';
import { HANDLER_SURFACES } from '../../runtime/authored/types.js';

const SEED = Number(process.env.BAD_INPUT_SEED ?? 20_261_128);

function sane(r: Reply, what: string): void {
  assert.ok(r.status < 500, `${what} → ${r.status}: ${r.text.slice(0, 300)}`);
  if (r.status >= 400) {
    assert.equal(r.body?.error?.correlationId, r.headers.get('x-service-correlation-id'), `${what}: error envelope`);
    assert.equal(typeof r.body.error.reasonCode, 'string');
  }
}

/** Small arbitrary JSON-ish values: the body limit is the HTTP layer's business, tested elsewhere. */
const any = fc.anything({ maxDepth: 2, maxKeys: 4 });
const nameArb = fc.oneof(fc.constantFrom('h', 'calc', 'a'.repeat(63), 'a'.repeat(64), 'Bad', '', 'x-y'), fc.string({ maxLength: 12 }), any);
/** Operation schemas two levels deep: the allowed keywords with odd values, and some refused ones. */
const leafFields = {
  type: fc.oneof(fc.constantFrom('object', 'string', 'integer', 'array', 'nope'), fc.array(fc.constantFrom('string', 'null'), { maxLength: 2 }), any),
  required: fc.oneof(fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }), any),
  enum: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), any),
  minimum: fc.oneof(fc.integer(), any),
  pattern: fc.oneof(fc.constantFrom('^a+$', '(', '[', '\\p{L}'), fc.string({ maxLength: 8 })),
  $ref: fc.constant('#'),
  format: fc.constant('email'),
};
const leaf = fc.record(leafFields, { requiredKeys: [] });
const level = (inner: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => fc.record({
  ...leafFields,
  properties: fc.dictionary(fc.string({ maxLength: 5 }), inner, { maxKeys: 3 }),
  items: inner,
  additionalProperties: fc.oneof(fc.boolean(), inner),
}, { requiredKeys: [] });
const schemaArb = fc.oneof(any, leaf, level(leaf), level(level(fc.oneof(leaf, any))));

const fields = fc.record({
  name: nameArb,
  surface: fc.oneof(fc.constantFrom(...HANDLER_SURFACES), any),
  source: fc.oneof(fc.constantFrom('src/main.ts', 'src/bad.ts', 'src/fs.ts', 'src/none.ts', '../x', 'src/main.json'), any),
  export: fc.oneof(fc.constantFrom('default', 'run', '1x', ''), any),
  grants: fc.oneof(fc.array(fc.oneof(fc.constantFrom('entity:Order:read', 'entity:*:*', 'root'), any), { maxLength: 3 }), any),
  limits: fc.oneof(fc.record({ cpuMs: fc.oneof(fc.integer({ min: -5, max: 100_000 }), any), wallMs: fc.integer(), memoryMiB: fc.integer({ min: -5, max: 10_000 }) }, { requiredKeys: [] }), any),
  operation: fc.oneof(fc.record({ name: nameArb, entity: fc.oneof(fc.constantFrom('Order', 'Nope'), any), input: schemaArb, output: schemaArb }, { requiredKeys: [] }), any),
  workflow: any,
}, { requiredKeys: [] });

/** A valid declaration with one or two fields replaced (most runs reach the compiler and the actor), a random record, or anything. */
const VALID = { name: 'h', surface: 'CoreHandler', source: 'src/main.ts' };
const bodyArb = fc.oneof(
  fc.tuple(fields, fc.subarray(['name', 'surface', 'source', 'export', 'grants', 'limits', 'operation', 'workflow'], { minLength: 1, maxLength: 2 }))
    .map(([f, keys]) => ({ ...VALID, ...Object.fromEntries(keys.filter((k) => k in f).map((k) => [k, (f as Record<string, unknown>)[k]])) })),
  fields,
  any,
);

forEachBackend('handlers: bad input', (backend: Backend) => {
  let server: TestServer;
  let c: Client;
  before(async () => {
    server = await startServer({ backend });
    c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: true }] });
    for (const [path, content] of [['src/main.ts', 'export default async () => 1;\nexport const run = 2;\n'], ['src/bad.ts', 'export default (;\n'], ['src/fs.ts', "import 'node:fs';\nexport default 1;\n"]]) {
      controlData(await c.post('/api/SourceAsset/file', { path, content }), 201);
    }
    controlData(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts' }), 201);
  });
  after(async () => {
    await server?.close();
  });

  it('random declaration bodies on POST and PUT never answer 5xx', async () => {
    await fc.assert(fc.asyncProperty(fc.boolean(), bodyArb, async (put, body) => {
      const text = JSON.stringify(body) ?? 'null';
      const r = put ? await c.request('PUT', '/api/Schema/handlers/calc', text) : await c.request('POST', '/api/Schema/handlers', text);
      sane(r, `${put ? 'PUT' : 'POST'} ${text.slice(0, 300)}`);
      // Keep `calc` there for the PUTs, and the names free for the POSTs.
      if (r.status === 201) sane(await c.delete(`/api/Schema/handlers/${r.body.data.name}`), 'delete');
    }), { seed: SEED, numRuns: 150 });
  });

  it('random names on GET, PUT and DELETE never answer 5xx', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 80 }), async (raw) => {
      const n = encodeURIComponent(raw);
      sane(await c.get(`/api/Schema/handlers/${n}`), `GET ${n}`);
      sane(await c.put(`/api/Schema/handlers/${n}`, { surface: 'CoreHandler', source: 'src/main.ts' }), `PUT ${n}`);
      if (raw !== 'calc') sane(await c.delete(`/api/Schema/handlers/${n}`), `DELETE ${n}`);
    }), { seed: SEED, numRuns: 60 });
  });
});
