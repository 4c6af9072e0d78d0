/**
 * Bad input over MCP (issue 13; CONTRACT: MCP, Errors): malformed JSON,
 * batches, wrong `jsonrpc`, unknown methods, params of the wrong type,
 * wrong content types, invalid UTF-8, deep and huge bodies, huge tool
 * arguments, clients that die mid-body; then fast-check properties over
 * random messages and random tool calls. Every answer is the protocol's
 * own (a JSON-RPC error or a 202), never a 5xx, never a crash.
 *
 * Seeded like the REST suite: BAD_INPUT_SEED=<n> reproduces a run,
 * BAD_INPUT_RUNS=<k> runs every property k times as often.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fuzzJsonValue, fuzzString } from '../support/unstorable-text.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { abortMidBody, postChunked } from '../rest/bad-input/http.js';
import { rawPost, rawSession, setupProject, type Project, type RawReply } from './support.js';

const SEED = Number(process.env.BAD_INPUT_SEED ?? 20_261_126);
const RUNS = Math.max(1, Number(process.env.BAD_INPUT_RUNS ?? 1) || 1);
const MAX_BODY = 1024 * 1024;
/** The codes an answer may carry: JSON-RPC's own, and the canonical -32003 / -32000 (with a serviceCode that is never INTERNAL). */
const RPC_CODES = new Set([-32700, -32600, -32601, -32602, -32003, -32000, -32001]);

/** Checks the shape every answer must have; returns the JSON-RPC error when there is one. */
function checkAnswer(r: RawReply, what: string): { code: number; message: string; data?: any } | null {
  assert.ok(r.status < 500, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  assert.ok(r.headers.get('x-service-correlation-id'), `${what}: correlation header`);
  if (r.status === 202) {
    assert.equal(r.text, '', `${what}: a 202 has no body`);
    return null;
  }
  assert.ok(r.body !== undefined && typeof r.body === 'object', `${what}: a JSON body, got ${r.text.slice(0, 200)}`);
  assert.equal(r.body.jsonrpc, '2.0', what);
  const hasResult = Object.hasOwn(r.body, 'result');
  const hasError = Object.hasOwn(r.body, 'error');
  assert.ok(hasResult !== hasError, `${what}: exactly one of result and error`);
  if (hasResult) {
    assert.equal(r.status, 200, what);
    return null;
  }
  const e = r.body.error;
  assert.ok(Number.isInteger(e.code) && RPC_CODES.has(e.code), `${what}: error code ${e.code}`);
  assert.equal(typeof e.message, 'string', what);
  if (e.code === -32003 || e.code === -32000) {
    assert.notEqual(e.data?.serviceCode, 'INTERNAL', `${what}: ${e.message}`);
    assert.equal(e.data.correlationId, r.headers.get('x-service-correlation-id'), `${what}: the error's correlationId is the header's`);
  }
  return e;
}

function expectRpcError(r: RawReply, what: string, status: number, code: number): any {
  const e = checkAnswer(r, what);
  assert.equal(r.status, status, `${what}: ${r.text.slice(0, 300)}`);
  assert.ok(e !== null, `${what}: an error`);
  assert.equal(e.code, code, `${what}: ${e.message}`);
  return e;
}

forEachBackend('MCP bad input', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  let headers: Record<string, string>;
  let customerId: string;

  before(async () => {
    server = await startServer({ backend, env: { MAX_BODY_BYTES: String(MAX_BODY) } });
    p = await setupProject(server.url, server.adminToken);
    const c = await p.admin.post('/api/customers', { email: 'bad@example.com' });
    expectStatus(c, 201);
    customerId = c.body.data.id;
    const s = await rawSession(p.endpoint, server.adminToken);
    headers = { authorization: `Bearer ${server.adminToken}`, 'mcp-session-id': s.sessionId };
  });
  after(async () => {
    await server?.close();
  });

  it('framing: parse errors, batches, wrong jsonrpc, bad ids and params shapes are JSON-RPC errors', async () => {
    const post = (body: unknown, extra: Record<string, string> = {}) => rawPost(p.endpoint, body, { ...headers, ...extra });
    expectRpcError(await post('{"jsonrpc": "2.0", "id": 1, "method": '), 'truncated JSON', 400, -32700);
    expectRpcError(await post('not json at all'), 'not JSON', 400, -32700);
    expectRpcError(await post(''), 'empty body', 400, -32600);
    expectRpcError(await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]), 'batch', 400, -32600);
    expectRpcError(await post([]), 'empty batch', 400, -32600);
    for (const v of ['1.0', 2, null, undefined]) {
      const e = await post({ ...(v === undefined ? {} : { jsonrpc: v }), id: 5, method: 'ping' });
      expectRpcError(e, `jsonrpc ${String(v)}`, 400, -32600);
      assert.equal(e.body.id, 5, 'a readable id is echoed');
    }
    for (const id of [{}, [1], true, null]) expectRpcError(await post({ jsonrpc: '2.0', id, method: 'ping' }), `id ${JSON.stringify(id)}`, 400, -32600);
    for (const method of [5, '', null, { a: 1 }]) expectRpcError(await post({ jsonrpc: '2.0', id: 1, method }), `method ${JSON.stringify(method)}`, 400, -32600);
    expectRpcError(await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: [1, 2] }), 'positional params', 400, -32602);
    expectRpcError(await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'x' }), 'string params', 400, -32600);
    expectRpcError(await post(42), 'a number', 400, -32600);
    expectRpcError(await post('"text"'), 'a string', 400, -32600);
    expectRpcError(await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' }), 'unknown protocol version header', 400, -32600);
    const accepted = await post({ jsonrpc: '2.0', id: 9, result: {} });
    assert.equal(accepted.status, 202, 'a response from the client is accepted');
    checkAnswer(accepted, 'client response');
  });

  it('methods and params: unknown methods -32601, params of the wrong type -32602', async () => {
    const call = (method: string, params?: unknown) => rawPost(p.endpoint, { jsonrpc: '2.0', id: 3, method, ...(params === undefined ? {} : { params }) }, headers);
    for (const m of ['nope', 'tools/nope', 'resources/subscribe', 'sampling/createMessage', '__proto__', 'constructor', 'toString']) {
      expectRpcError(await call(m), `method ${m}`, 200, -32601);
    }
    const cases: Array<[string, unknown]> = [
      ['tools/call', { name: 5 }],
      ['tools/call', {}],
      ['tools/call', { name: 'Order.list', arguments: [] }],
      ['tools/call', { name: 'Order.list', arguments: 'x' }],
      ['tools/call', { name: 'Order.list', arguments: { filter: 'status' } }],
      ['tools/call', { name: 'Order.list', arguments: { page: 1.5 } }],
      ['tools/call', { name: 'Order.list', arguments: { sort: [1] } }],
      ['tools/call', { name: 'Order.get', arguments: { id: 5 } }],
      ['tools/call', { name: 'Order.create', arguments: { input: [] } }],
      ['tools/call', { name: 'Order.create', arguments: { input: {}, idempotencyKey: 1 } }],
      ['tools/call', { name: '__proto__', arguments: {} }],
      ['tools/list', { cursor: 5 }],
      ['tools/list', { cursor: 'bm90IGEgY3Vyc29y' }],
      ['resources/list', { cursor: {} }],
      ['resources/read', {}],
      ['resources/read', { uri: {} }],
      ['resources/read', { uri: 'service://schema/entities/' }],
      ['prompts/get', { name: 'entity.describe', arguments: [] }],
      ['prompts/get', { name: 'entity.describe', arguments: { entity: 3 } }],
      ['completion/complete', { ref: null, argument: { name: 'entity', value: 'a' } }],
      ['completion/complete', { ref: { type: 'ref/prompt', name: 'entity.describe' }, argument: { name: 'entity', value: 3 } }],
      ['completion/complete', { ref: { type: 'ref/prompt', name: 'other' }, argument: { name: 'entity', value: 'a' } }],
      ['initialize', { protocolVersion: 1 }],
      ['initialize', { protocolVersion: '2025-06-18', capabilities: 'all' }],
    ];
    for (const [m, params] of cases) expectRpcError(await call(m, params), `${m} ${JSON.stringify(params)}`, 200, -32602);
    // The arguments' values are the operation's to judge: REST's validation errors, -32000.
    const invalid = expectRpcError(await call('tools/call', { name: 'Order.create', arguments: { input: { total: 'abc', status: 'nope', customer: 'x' } } }), 'invalid input', 200, -32000);
    assert.equal(invalid.data.serviceCode, 'VALIDATION_FAILED');
    const badFilter = expectRpcError(await call('tools/call', { name: 'Order.list', arguments: { filter: { nope: { eq: 1 } } } }), 'unknown filter field', 200, -32000);
    assert.equal(badFilter.data.serviceCode, 'VALIDATION_FAILED');
    const badId = expectRpcError(await call('tools/call', { name: 'Order.get', arguments: { id: "' OR 1=1 --" } }), 'SQL-looking id', 200, -32000);
    assert.ok(['VALIDATION_FAILED', 'NOT_FOUND'].includes(badId.data.serviceCode));
  });

  it('bodies: wrong content type 415, invalid UTF-8 and deep nesting -32700, over the limit 413 (declared or chunked), a client gone mid-body', async () => {
    const ct = await fetch(p.endpoint, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    assert.equal(ct.status, 415);
    assert.equal((await ct.json()).error.code, -32600);
    const utf8 = await fetch(p.endpoint, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) });
    assert.equal(utf8.status, 400);
    assert.equal((await utf8.json()).error.code, -32700);
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    expectRpcError(await rawPost(p.endpoint, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":${deep}}}`, headers), 'deep nesting', 400, -32700);
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(MAX_BODY) } });
    const declared = await rawPost(p.endpoint, big, headers);
    expectRpcError(declared, 'declared over the limit', 413, -32600);
    assert.equal(declared.body.error.data.serviceCode, 'PAYLOAD_TOO_LARGE');
    const chunked = await postChunked(server.url, new URL(p.endpoint).pathname, { ...headers, 'content-type': 'application/json' }, MAX_BODY * 2);
    assert.equal(chunked.status, 413);
    assert.equal(chunked.body.error.code, -32600);
    await abortMidBody(server.url, new URL(p.endpoint).pathname, { ...headers, 'content-type': 'application/json' }, 5000, '{"jsonrpc":"2.0",');
    checkAnswer(await rawPost(p.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers), 'ping after an aborted upload');
  });

  it('huge tool arguments under the limit: an answer, never a crash', async () => {
    const call = (args: unknown) => rawPost(p.endpoint, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'Order.create', arguments: args } }, headers);
    const longNote = await call({ input: { total: '1.00', status: 'paid', customer: customerId, note: 'n'.repeat(900 * 1024) } });
    assert.equal(checkAnswer(longNote, 'long note'), null, 'a long string is stored');
    const manyKeys: Record<string, number> = {};
    for (let i = 0; i < 20_000; i++) manyKeys[`k${i}`] = i;
    expectRpcError(await call({ input: manyKeys }), 'many unknown fields', 200, -32000);
    const wideFilter = { or: Array.from({ length: 5000 }, (_, i) => ({ note: { eq: `v${i}` } })) };
    checkAnswer(await rawPost(p.endpoint, { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'Order.list', arguments: { filter: wideFilter } } }, headers), 'wide filter');
    checkAnswer(await rawPost(p.endpoint, { jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'Order.list', arguments: { pageSize: 2 ** 31, page: Number.MAX_SAFE_INTEGER } } }, headers), 'huge paging');
  });

  it('property: random messages get the protocol\'s answer, never a 5xx', async () => {
    const methods = fc.oneof(
      fc.constantFrom('initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list', 'prompts/list', 'prompts/get', 'completion/complete', 'notifications/initialized'),
      fuzzString({ maxLength: 30 }),
    );
    const message = fc.record({
      jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('2.0'), fuzzJsonValue({ maxDepth: 1 })),
      id: fc.oneof(fc.integer(), fuzzString({ maxLength: 20 }), fuzzJsonValue({ maxDepth: 1 })),
      method: fc.oneof(methods, methods, fuzzJsonValue({ maxDepth: 1 })),
      params: fc.oneof(fc.dictionary(fc.constantFrom('name', 'arguments', 'cursor', 'uri', 'ref', 'argument', 'protocolVersion', 'capabilities', 'x'), fuzzJsonValue({ maxDepth: 3 })), fuzzJsonValue({ maxDepth: 2 })),
    }, { requiredKeys: [] });
    const body = fc.oneof(message, message, fuzzJsonValue({ maxDepth: 3 }), fc.array(message, { maxLength: 3 }));
    await fc.assert(fc.asyncProperty(body, async (b) => {
      checkAnswer(await rawPost(p.endpoint, b, headers), `body ${JSON.stringify(b).slice(0, 300)}`);
    }), { seed: SEED, numRuns: 150 * RUNS, endOnFailure: true });
  });

  it('property: random tool calls get a result, -32602, or the operation\'s -32003 / -32000', async () => {
    const names = fc.oneof(fc.constantFrom('Order.list', 'Order.get', 'Order.create', 'Order.update', 'Order.delete', 'Customer.list', 'Customer.get'), fuzzString({ maxLength: 20 }));
    const argNames = fc.constantFrom('filter', 'sort', 'page', 'pageSize', 'cursor', 'includeTotal', 'include', 'fields', 'id', 'input', 'idempotencyKey', 'ifMatch', 'force', 'bogus');
    const value = fc.oneof(
      fuzzJsonValue({ maxDepth: 3 }),
      fc.constantFrom('total', '-total,createdAt', 'customer', customerId, '00000000-0000-4000-8000-000000000000', "'; DROP TABLE x; --"),
      fc.record({ total: fc.oneof(fc.constant('1.50'), fuzzJsonValue({ maxDepth: 1 })), status: fc.oneof(fc.constantFrom('paid', 'pending'), fuzzString()), customer: fc.constant(customerId) }, { requiredKeys: [] }),
      fc.dictionary(fc.constantFrom('total', 'status', 'note', 'id', 'and', 'or'), fuzzJsonValue({ maxDepth: 2 })),
    );
    const call = fc.record({ name: names, arguments: fc.oneof(fc.dictionary(argNames, value, { maxKeys: 5 }), fuzzJsonValue({ maxDepth: 1 })) });
    await fc.assert(fc.asyncProperty(call, async (params) => {
      const what = `tools/call ${JSON.stringify(params).slice(0, 300)}`;
      const r = await rawPost(p.endpoint, { jsonrpc: '2.0', id: 1, method: 'tools/call', params }, headers);
      const e = checkAnswer(r, what);
      assert.equal(r.status, 200, what);
      if (e !== null) assert.ok([-32602, -32003, -32000].includes(e.code), `${what}: ${e.code}`);
    }), { seed: SEED + 1, numRuns: 150 * RUNS, endOnFailure: true });
    // Still serving.
    checkAnswer(await rawPost(p.endpoint, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers), 'ping after the properties');
  });
});
