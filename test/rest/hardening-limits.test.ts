// test-lane: alone (measures another tenant's latency under attack; scripts/run-tests.ts)
/**
 * Limits that keep one caller from hurting every tenant of a node (issue 8,
 * "Hardening"): the response size cap and the top-level catch, the capped
 * validation error list, batches past PostgreSQL's bind-parameter limit,
 * conflicting framing headers, and too many request headers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { isConnectionError } from '../../storage/index.js';
import { branchSchemaName } from '../../runtime/publication/sql-names.js';
import { checkReply, expectError, expectOk } from './bad-input/http.js';

const MiB = 1024 * 1024;

/** What a raw socket got back, and whether the server closed it within `waitMs`. */
interface RawExchange {
  text: string;
  closed: boolean;
  closedAfterMs: number;
}

/** Writes `request` on a fresh socket and collects what comes back until the server closes or `waitMs` passes. */
function exchange(baseUrl: string, request: string, waitMs: number): Promise<RawExchange> {
  const u = new URL(baseUrl);
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port), u.hostname);
    const t0 = Date.now();
    let text = '';
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ text, closed, closedAfterMs: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    sock.on('close', () => finish(true));
    sock.on('error', () => {});
    sock.write(request);
  });
}

/** Status lines of every HTTP response in a raw exchange. */
const statusLines = (text: string): string[] => text.split('\r\n').filter((l) => /^HTTP\/1\.[01] \d{3}/.test(l));

forEachBackend('hardening: response size cap', (backend) => {
  let server: TestServer;
  let client: Client;
  before(async () => {
    // A small cap keeps the test fast: four rows of 30,000 characters pass 64 KiB.
    server = await startServer({ backend, env: { MAX_BODY_BYTES: String(32 * 1024), MAX_RESPONSE_BYTES: String(64 * 1024) } });
    client = (await bootstrapProject(server.url, server.adminToken)).client;
    await defineEntity(client, { entityName: 'Note', fields: ['a', 'b', 'c'].map((name) => ({ name, type: 'String', nullable: true })) });
    for (let i = 0; i < 4; i++) expectOk(await client.post('/api/notes', { a: String(i).repeat(30_000) }), 'create a big note', 201);
  });
  after(async () => server?.close());

  it('a list whose JSON would pass MAX_RESPONSE_BYTES answers 422 Response.TooLarge, and smaller pages still work', async () => {
    const r = await client.get('/api/notes?pageSize=4');
    const e = expectError(r, 'GET /api/notes?pageSize=4 over the cap', 422, 'Response.TooLarge');
    assert.equal(e.code, 'VALIDATION_FAILED');
    assert.match(e.message, /pageSize/);
    assert.ok(r.text.length < 2_000, 'the refusal is small');
    const one = expectOk(await client.get('/api/notes?pageSize=1'), 'one row fits');
    assert.equal(one.data.length, 1);
    const sparse = expectOk(await client.get('/api/notes?pageSize=4&fields=id'), 'fields=id fits');
    assert.equal(sparse.data.length, 4);
  });

  it('a row grown past the cap: its write says it was applied, its read answers 422, fields= reads it', async () => {
    const id = expectOk(await client.post('/api/notes', { a: 'x'.repeat(30_000) }), 'create', 201).data.id as string;
    expectOk(await client.patch(`/api/notes/${id}`, { b: 'y'.repeat(30_000) }), 'second field', 200);
    const grown = await client.patch(`/api/notes/${id}`, { c: 'z'.repeat(30_000) });
    const e = expectError(grown, 'PATCH that makes the row pass the cap', 422, 'Response.TooLarge');
    assert.match(e.message, /applied/);
    expectError(await client.get(`/api/notes/${id}`), 'GET the grown row', 422, 'Response.TooLarge');
    const part = expectOk(await client.get(`/api/notes/${id}?fields=c`), 'GET ?fields=c');
    assert.equal(part.data.c.length, 30_000, 'the PATCH was applied');
  });
});

forEachBackend('hardening: a response past V8\'s string limit', (backend) => {
  let server: TestServer;
  let client: Client;
  let projectId: string;
  before(async () => {
    server = await startServer({ backend });
    const boot = await bootstrapProject(server.url, server.adminToken);
    client = boot.client;
    projectId = boot.projectId;
    await defineEntity(client, { entityName: 'Blob', fields: [{ name: 'text', type: 'String', nullable: false }] });
  });
  after(async () => server?.close());

  it('60 rows of ~10 MiB listed in one page: 422 with the default cap, the node stays up', { timeout: 180_000 }, async () => {
    // The probe's shape: one JSON.stringify of this page would pass V8's ~512 Mi character limit
    // (RangeError: Invalid string length) and, uncaught, stop the process for every tenant.
    // The rows go in by SQL (each is a valid 10 MiB create; 60 HTTP round trips only cost time).
    const table = `${branchSchemaName(projectId, 'main')}"."Blob`;
    await server.node.services.db.query(`INSERT INTO "${table}" (text) SELECT repeat('z', ${10 * MiB - 64}) FROM generate_series(1, 60)`);
    const r = await client.get('/api/blobs?pageSize=60');
    expectError(r, 'GET /api/blobs?pageSize=60', 422, 'Response.TooLarge');
    const health = await client.get('/api/health');
    checkReply(health, 'the node answers after the refused page');
    assert.equal(health.status, 200);
    const count = expectOk(await client.get('/api/blobs/count'), 'count');
    assert.equal(count.data.count, 60);
  });
});

describe('hardening: an exception in the serialization step after dispatch', () => {
  let server: TestServer;
  before(async () => {
    // Without the answer check, which would refuse the injected value in dispatch() before the adapter serializes it.
    server = await startServer({ env: { CHECK_ANSWERS: 'false' } });
  });
  after(async () => server?.close());

  it('answers 500 INTERNAL with the correlation id, logs it, and the node answers the next request', { timeout: 30_000 }, async () => {
    const services = server.node.services;
    const logged: Array<Record<string, unknown>> = [];
    const log = services.log as { error: (msg: string, fields?: Record<string, unknown>) => void };
    const realError = log.error;
    log.error = (msg, fields) => logged.push({ msg, ...fields });
    // A value JSON.stringify refuses (TypeError), reaching the body only after dispatch succeeded.
    const node = services.node as unknown as Record<string, unknown>;
    const mode = Object.getOwnPropertyDescriptor(node, 'mode');
    Object.defineProperty(node, 'mode', { value: 10n, configurable: true, writable: true });
    let r;
    try {
      // The admin's health answer carries the node's mode (the public one is the status only).
      r = await fetch(`${server.url}/api/health`, { headers: { 'x-service-correlation-id': 'probe-serialization-1', authorization: `Bearer ${server.adminToken}` } });
    } finally {
      if (mode === undefined) delete node.mode;
      else Object.defineProperty(node, 'mode', mode);
      log.error = realError;
    }
    assert.equal(r.status, 500);
    assert.equal(r.headers.get('x-service-correlation-id'), 'probe-serialization-1');
    const body = await r.json() as { error: { code: string; correlationId: string } };
    assert.equal(body.error.code, 'INTERNAL');
    assert.equal(body.error.correlationId, 'probe-serialization-1');
    assert.ok(logged.some((l) => l.correlationId === 'probe-serialization-1'), 'the failure is logged with the correlation id');
    const next = await fetch(`${server.url}/api/health`);
    assert.equal(next.status, 200);
  });
});

forEachBackend('hardening: validation error amplification', (backend) => {
  let server: TestServer;
  let client: Client;
  before(async () => {
    server = await startServer({ backend });
    client = (await bootstrapProject(server.url, server.adminToken)).client;
    await defineEntity(client, { entityName: 'Item', fields: [{ name: 'name', type: 'String', nullable: false }] });
  });
  after(async () => server?.close());

  it('a body with 300,000 unknown keys lists 100 errors with errorCount and truncated, in a small answer', async () => {
    const body: Record<string, unknown> = { name: 'ok' };
    for (let i = 0; i < 300_000; i++) body[`k${i}`] = 1;
    const t0 = Date.now();
    const r = await client.post('/api/items', body);
    const ms = Date.now() - t0;
    const e = expectError(r, 'POST 300,000 unknown keys', 422, 'ItemValidation.UnknownField') as ReturnType<typeof expectError> & { errorCount?: number; truncated?: boolean };
    assert.equal(e.errors?.length, 100, 'at most 100 errors listed');
    assert.equal(e.errorCount, 300_000, 'every problem counted');
    assert.equal(e.truncated, true);
    assert.ok(r.text.length < 64 * 1024, `answer of ${r.text.length} characters`);
    assert.ok(ms < 5_000, `answered in ${ms} ms`);
    // A short list is complete.
    const few = expectError(await client.post('/api/items', { name: 'x', a: 1, b: 2 }), 'two unknown keys', 422) as ReturnType<typeof expectError> & { errorCount?: number; truncated?: boolean };
    assert.equal(few.errors?.length, 2);
    assert.equal(few.errorCount, 2);
    assert.equal(few.truncated, false);
  });

  it('an entity definition with 200,000 unknown properties is capped the same way', async () => {
    const def: Record<string, unknown> = { entityName: 'Wider', fields: [{ name: 'a', type: 'String', nullable: true }] };
    for (let i = 0; i < 200_000; i++) def[`k${i}`] = 1;
    const r = await client.post('/api/Schema/entities', def);
    const e = expectError(r, 'POST /api/Schema/entities with 200,000 unknown keys', 422, 'Schema.UnknownProperty') as ReturnType<typeof expectError> & { errorCount?: number; truncated?: boolean };
    assert.equal(e.errors?.length, 100);
    assert.equal(e.errorCount, 200_000);
    assert.equal(e.truncated, true);
    assert.ok(r.text.length < 64 * 1024, `answer of ${r.text.length} characters`);
  });
});

forEachBackend('hardening: batches past the bind-parameter limit', (backend) => {
  let server: TestServer;
  let client: Client;
  const FIELDS = 66;
  before(async () => {
    server = await startServer({ backend });
    client = (await bootstrapProject(server.url, server.adminToken)).client;
    const fields = Array.from({ length: FIELDS }, (_, i) => ({ name: `f${i}`, type: 'Int', nullable: false, unique: i === 0 }));
    await defineEntity(client, { entityName: 'Wide', fields });
  });
  after(async () => server?.close());

  it('1,000 rows × 66 fields (66,000 parameters) are created all together, in order', { timeout: 120_000 }, async () => {
    const items = Array.from({ length: 1000 }, (_, r) => Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`f${i}`, r * 100 + i])));
    const r = await client.post('/api/wides/batch', { items });
    const body = expectOk(r, 'POST /api/wides/batch with 66,000 parameters', 201);
    assert.equal(body.data.length, 1000);
    body.data.forEach((row: Record<string, number>, i: number) => assert.equal(row.f0, i * 100, `row ${i} in input order`));
    assert.equal(expectOk(await client.get('/api/wides/count'), 'count').data.count, 1000);
  });

  it('all or nothing across the split: one bad row in the last part writes nothing', { timeout: 120_000 }, async () => {
    const items = Array.from({ length: 1000 }, (_, r) => Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`f${i}`, r * 100 + 50])));
    // Valid for the validator, refused by the database in the last statement: f0 = 0 is taken.
    items[999]!.f0 = 0;
    const r = await client.post('/api/wides/batch', { items });
    expectError(r, 'batch whose last row breaks a unique key', 409);
    assert.equal(expectOk(await client.get('/api/wides/count'), 'count').data.count, 1000, 'nothing of the refused batch was written');
  });

  it('a protocol violation (08P01) is not a lost connection', () => {
    assert.equal(isConnectionError({ code: '08P01', message: 'bind message has 464 parameter formats but 0 parameters' }), false);
    assert.equal(isConnectionError({ code: '08006', message: 'connection failure' }), true);
  });
});

describe('hardening: request framing and header count (raw sockets)', () => {
  let server: TestServer;
  let head: (method: string, path: string, extra: string[]) => string;
  before(async () => {
    server = await startServer();
    const boot = await bootstrapProject(server.url, server.adminToken);
    await defineEntity(boot.client, { entityName: 'Ping', fields: [{ name: 'n', type: 'Int', nullable: true }] });
    const u = new URL(server.url);
    head = (method, path, extra) => [`${method} ${path} HTTP/1.1`, `Host: ${u.host}`, `Authorization: Bearer ${server.adminToken}`,
      `X-Service-Tenant: ${boot.tenant}`, `X-Service-Project: ${boot.project}`, ...extra, '', ''].join('\r\n');
  });
  after(async () => server?.close());

  it('conflicting Content-Length headers: the connection closes, the bytes after the first body are never served', async () => {
    const smuggled = head('GET', '/api/pings', []);
    const body = '{"n":1}';
    const r = await exchange(server.url, head('POST', '/api/pings', ['Content-Type: application/json', `Content-Length: ${body.length}`, `Content-Length: ${body.length + smuggled.length}`]) + body + smuggled, 3_000);
    assert.equal(r.closed, true, 'the connection is closed');
    assert.deepEqual(statusLines(r.text), [], `nothing is answered: ${r.text.slice(0, 300)}`);
    // Nothing was written either.
    const list = await exchange(server.url, head('GET', '/api/pings/count', ['Connection: close']), 3_000);
    assert.match(list.text, /"count":0/);
  });

  it('Content-Length together with Transfer-Encoding: closed without an answer', async () => {
    const r = await exchange(server.url, `${head('POST', '/api/pings', ['Content-Type: application/json', 'Transfer-Encoding: chunked', 'Content-Length: 7'])}7\r\n{"n":2}\r\n0\r\n\r\n`, 3_000);
    assert.equal(r.closed, true);
    assert.deepEqual(statusLines(r.text), []);
  });

  it('a repeated identical Content-Length is accepted', async () => {
    const body = '{"n":3}';
    const r = await exchange(server.url, head('POST', '/api/pings', ['Content-Type: application/json', `Content-Length: ${body.length}`, `Content-Length: ${body.length}`, 'Connection: close']) + body, 3_000);
    assert.deepEqual(statusLines(r.text), ['HTTP/1.1 201 Created']);
  });

  it('too many headers (uWS 20.30 parses at most 48): no answer, the socket closes by uWS\'s idle timeout, and the node serves the next request', { timeout: 30_000 }, async () => {
    const many = Array.from({ length: 55 }, (_, i) => `X-Filler-${i}: v`);
    const r = await exchange(server.url, head('GET', '/api/pings', many), 20_000);
    assert.deepEqual(statusLines(r.text), [], 'the fork drops the request before JS sees it');
    assert.equal(r.closed, true, 'the socket does not hang open');
    assert.ok(r.closedAfterMs < 15_000, `closed after ${r.closedAfterMs} ms`);
    const next = await exchange(server.url, head('GET', '/api/health', ['Connection: close']), 3_000);
    assert.deepEqual(statusLines(next.text), ['HTTP/1.1 200 OK']);
  });

  it('40 headers are still served', async () => {
    const some = Array.from({ length: 40 }, (_, i) => `X-Filler-${i}: v`);
    const r = await exchange(server.url, head('GET', '/api/pings', [...some, 'Connection: close']), 3_000);
    assert.deepEqual(statusLines(r.text), ['HTTP/1.1 200 OK']);
  });
});
