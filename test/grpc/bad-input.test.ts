/**
 * Bad input over gRPC (the REST bad-input suite's twin): random bytes as
 * request messages, malformed gRPC frames on raw HTTP/2, unknown services and
 * methods, oversize messages and wrong metadata. Every call must end with a
 * gRPC status of the protocol (never INTERNAL or UNKNOWN, never a crash), a
 * refusal of ours with its x-service-* trailers, and the server must keep
 * answering. Seeded like the REST suite: BAD_INPUT_SEED, BAD_INPUT_RUNS.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { fuzzString, UNSTORABLE_CHARS } from '../support/unstorable-text.js';
import { bootstrapProject, type Client, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { metadata } from './support.js';

const SEED = Number(process.env.BAD_INPUT_SEED ?? 20_251_126);
const RUNS = Math.max(1, Number(process.env.BAD_INPUT_RUNS ?? 1) || 1);

const ITEM = { entityName: 'Item', fields: [{ name: 'label', type: 'String', nullable: false }, { name: 'n', type: 'Int', nullable: true }, { name: 'at', type: 'DateTime', nullable: true }, { name: 'doc', type: 'JSON', nullable: true }] };
const UNARY = ['Get', 'List', 'Create', 'Update', 'Delete'] as const;
const STREAMING = ['StreamList', 'Watch'] as const;
/** Statuses no input may produce: they mean the server failed, not the request. */
const SERVER_FAULTS = new Set([grpc.status.INTERNAL, grpc.status.UNKNOWN]);
const identity = (b: Buffer): Buffer => b;

interface Ending {
  code: number;
  trailers: grpc.Metadata | null;
}

async function property<T>(name: string, offset: number, arb: fc.Arbitrary<T>, numRuns: number, run: (v: T) => Promise<void>): Promise<void> {
  const seed = SEED + offset;
  try {
    await fc.assert(fc.asyncProperty(arb, run), { seed, numRuns: numRuns * RUNS, endOnFailure: true });
  } catch (err) {
    throw new Error(`[grpc bad-input] property "${name}" failed (seed ${seed}); reproduce with BAD_INPUT_SEED=${SEED}\n${(err as Error).message.slice(0, 3000)}`, { cause: err });
  }
}

/** Every refusal carries the CONTRACT's trailers (grpc-js's own size limit included); client-side ends (cancel, the client's deadline) carry none. */
function checkEnding(e: Ending, what: string): void {
  assert.ok(!SERVER_FAULTS.has(e.code), `${what}: server fault status ${e.code}`);
  if (e.code !== grpc.status.OK && e.code !== grpc.status.CANCELLED && e.code !== grpc.status.DEADLINE_EXCEEDED) {
    assert.ok(String(e.trailers?.get('x-service-code')[0] ?? '') !== '', `${what}: status ${e.code} without x-service-code`);
    assert.match(String(e.trailers?.get('x-service-correlation-id')[0] ?? ''), /^[0-9a-f-]{36}$/, `${what}: no correlation id`);
  }
}

forEachBackend('gRPC bad input', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;
  let tenant: string;
  let project: string;
  let raw: grpc.Client;
  let md: grpc.Metadata;

  const unaryRaw = (path: string, bytes: Buffer, m: grpc.Metadata): Promise<Ending> => new Promise((resolve) => {
    const call = raw.makeUnaryRequest(path, identity, identity, bytes, m, { deadline: Date.now() + 10_000 }, () => {});
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, trailers: s.metadata }));
  });
  const streamRaw = (path: string, bytes: Buffer, m: grpc.Metadata): Promise<Ending> => new Promise((resolve) => {
    const call = raw.makeServerStreamRequest(path, identity, identity, bytes, m, { deadline: Date.now() + 10_000 });
    call.on('data', () => {});
    call.on('error', () => {});
    // A Watch that was accepted stays open: end it once it is attached.
    call.on('metadata', () => setTimeout(() => call.cancel(), 20));
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, trailers: s.metadata }));
  });

  /** The server still serves a valid call. */
  async function stillUp(): Promise<void> {
    const e = await unaryRaw('/service.app.ItemService/List', Buffer.alloc(0), md);
    assert.equal(e.code, grpc.status.OK, 'the server still answers');
  }

  before(async () => {
    server = await startServer({ backend, env: { MAX_BODY_BYTES: String(256 * 1024) } });
    const p = await bootstrapProject(server.url, server.adminToken);
    ({ tenant, project } = p);
    admin = p.client;
    await defineEntity(admin, ITEM);
    raw = new grpc.Client(`127.0.0.1:${server.node.grpcPort}`, grpc.credentials.createInsecure());
    md = metadata(server.adminToken, tenant, project);
  });
  after(async () => {
    raw?.close();
    await server.close();
  });

  it('random bytes as any method\'s request message end with a protocol status', async () => {
    const methodArb = fc.constantFrom(...UNARY, ...STREAMING);
    const bytesArb = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.uint8Array({ minLength: 64, maxLength: 4096 }),
      // Plausible prefixes: a field tag then garbage (wrong wire types, truncated lengths, deep groups).
      fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 7 }), fc.uint8Array({ maxLength: 32 })).map(([f, w, rest]) => Uint8Array.from([(f << 3) | w, ...rest])),
    );
    await property('random messages', 1, fc.tuple(methodArb, bytesArb), 120, async ([method, bytes]) => {
      const path = `/service.app.ItemService/${method}`;
      const e = (STREAMING as readonly string[]).includes(method) ? await streamRaw(path, Buffer.from(bytes), md) : await unaryRaw(path, Buffer.from(bytes), md);
      checkEnding(e, `${method} ${Buffer.from(bytes).toString('hex').slice(0, 80)}`);
    });
    await stillUp();
  });

  it('unknown services and methods are UNIMPLEMENTED', async () => {
    const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.]{0,30}$/);
    await property('unknown paths', 2, fc.tuple(name, name, fc.boolean()), 60, async ([service, method, ours]) => {
      const path = ours ? `/service.app.${service}Service/${method}` : `/${service}/${method}`;
      const e = await unaryRaw(path, Buffer.alloc(0), md);
      const known = ours && /^[A-Z][A-Za-z0-9]{0,62}$/.test(service) && service === 'Item' && (UNARY as readonly string[]).includes(method);
      if (!known) assert.equal(e.code, grpc.status.UNIMPLEMENTED, `${path}: ${e.code}`);
      checkEnding(e, path);
    });
    await stillUp();
  });

  it('string fields holding U+0000 (INVALID_ARGUMENT Request.NulCharacter) or lone surrogates: never a server fault', async () => {
    const proto = await admin.get('/grpc/proto/service-app.proto');
    const label = Number(/ItemInput \{[^}]*?\blabel = (\d+);/s.exec(proto.text)?.[1]);
    assert.ok(Number.isInteger(label), 'the served proto numbers ItemInput.label');
    /** A length-delimited field (lengths under 128 bytes: one varint byte). */
    const field = (n: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([(n << 3) | 2, bytes.length]), bytes]);
    /** UTF-8 as a lax encoder writes it: a lone surrogate as its three bytes (ED A0 80), which are not valid UTF-8. */
    const laxUtf8 = (s: string): Buffer => Buffer.concat([...s].map((ch) => {
      const cp = ch.charCodeAt(0);
      return ch.length === 1 && cp >= 0xd800 && cp <= 0xdfff ? Buffer.from([0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]) : Buffer.from(ch, 'utf8');
    }));
    const text = fuzzString({ maxLength: 20 }).filter((s) => laxUtf8(s).length < 100);
    const caseArb = fc.record({ method: fc.constantFrom('Create', 'Get', 'List'), s: text, forced: fc.constantFrom(...UNSTORABLE_CHARS, '') });
    // A plain Create first: the hand-made encoding is right.
    const ok = await unaryRaw('/service.app.ItemService/Create', field(1, field(label, Buffer.from('plain'))), md);
    assert.equal(ok.code, grpc.status.OK, 'a hand-encoded Create succeeds');
    await property('unstorable strings', 5, caseArb, 60, async ({ method, s: generated, forced }) => {
      const s = forced === '' ? generated : generated + forced;
      const bytes = laxUtf8(s);
      const msg = method === 'Create' ? field(1, field(label, bytes)) : method === 'Get' ? field(1, bytes) : field(3, bytes);
      const e = await unaryRaw(`/service.app.ItemService/${method}`, msg, md);
      const what = `${method} with ${JSON.stringify(s)}: status ${e.code} ${String(e.trailers?.get('x-service-reason-code')[0] ?? '')}`;
      checkEnding(e, what);
      // Node's protobuf string decoding turns the bytes of a lone surrogate into U+FFFD, so only NUL arrives as sent.
      if (s.includes('\u0000')) {
        assert.equal(e.code, grpc.status.INVALID_ARGUMENT, what);
        assert.equal(String(e.trailers?.get('x-service-reason-code')[0] ?? ''), 'Request.NulCharacter', what);
      }
    });
    await stillUp();
  });

  it('wrong metadata is refused with UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND or INVALID_ARGUMENT', async () => {
    const text = fc.string({ maxLength: 80 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x').trim());
    const mdArb = fc.record({
      authorization: fc.option(fc.oneof(text, text.map((t) => `Bearer ${t}`), fc.constant(`Bearer ${'a'.repeat(4000)}`)), { nil: undefined }),
      tenant: fc.option(fc.oneof(text, fc.constant(tenant)), { nil: undefined }),
      project: fc.option(fc.oneof(text, fc.constant(project)), { nil: undefined }),
      binary: fc.boolean(),
    });
    await property('wrong metadata', 3, mdArb, 80, async (v) => {
      const m = new grpc.Metadata();
      if (v.authorization !== undefined && v.authorization !== '') m.set('authorization', v.authorization);
      if (v.tenant !== undefined && v.tenant !== '') m.set('x-service-tenant', v.tenant);
      if (v.project !== undefined && v.project !== '') m.set('x-service-project', v.project);
      if (v.binary) m.set('x-service-tenant-bin', Buffer.from([0, 1, 2]));
      const e = await unaryRaw('/service.app.ItemService/List', Buffer.alloc(0), m);
      assert.ok([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.NOT_FOUND, grpc.status.INVALID_ARGUMENT].includes(e.code), `status ${e.code} for ${JSON.stringify(v).slice(0, 200)}`);
      checkEnding(e, 'metadata');
    });
    await stillUp();
  });

  it('malformed gRPC frames on raw HTTP/2 end with a grpc-status, and oversize messages with RESOURCE_EXHAUSTED', async () => {
    const session = http2.connect(`http://127.0.0.1:${server.node.grpcPort}`);
    session.on('error', () => {});
    const send = (body: Buffer, headers: Record<string, string> = {}): Promise<number | null> => new Promise((resolve) => {
      const req = session.request({
        ':method': 'POST', ':path': '/service.app.ItemService/Create', 'content-type': 'application/grpc', te: 'trailers',
        authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': tenant, 'x-service-project': project, ...headers,
      });
      let status: number | null = null;
      const take = (h: http2.IncomingHttpHeaders): void => {
        if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']);
      };
      req.on('response', take);
      req.on('trailers', take);
      req.on('data', () => {});
      req.on('error', () => {});
      req.on('close', () => resolve(status));
      req.end(body);
    });
    const frame = (flag: number, declared: number, payload: Buffer): Buffer => {
      const h = Buffer.alloc(5);
      h[0] = flag;
      h.writeUInt32BE(declared >>> 0, 1);
      return Buffer.concat([h, payload]);
    };
    const frames = fc.oneof(
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
      fc.tuple(fc.integer({ min: 0, max: 3 }), fc.nat(), fc.uint8Array({ maxLength: 64 })).map(([f, n, p]) => frame(f, n, Buffer.from(p))),
      fc.uint8Array({ maxLength: 64 }).map((p) => frame(0, p.length, Buffer.from(p))),
    );
    try {
      await property('malformed frames', 4, frames, 60, async (body) => {
        const status = await send(body);
        assert.ok(status !== null, `no grpc-status for ${body.toString('hex').slice(0, 80)}`);
        assert.ok(!SERVER_FAULTS.has(status) || status === grpc.status.INTERNAL && body.length >= 5 && body[0] !== 0, `status ${status} for ${body.toString('hex').slice(0, 80)}`);
      });
      // Declared and sent past the bound (MAX_BODY_BYTES here is 256 KiB).
      const big = Buffer.alloc(300 * 1024, 0x41);
      assert.equal(await send(frame(0, big.length, big)), grpc.status.RESOURCE_EXHAUSTED);
      // A wrong content type is refused by grpc-js's own status or HTTP error; no grpc-status then is fine, but no crash.
      await send(Buffer.alloc(0), { 'content-type': 'text/plain' });
    } finally {
      session.close();
    }
    await stillUp();
  });

  it('oversize messages through the client end with RESOURCE_EXHAUSTED, and nothing is written', async () => {
    const before = (await admin.get('/api/items/count')).body.data.count;
    const e = await unaryRaw('/service.app.ItemService/Create', Buffer.alloc(512 * 1024, 0x0a), md);
    assert.equal(e.code, grpc.status.RESOURCE_EXHAUSTED);
    // grpc-js refuses it before our handler: the trailers are still CONTRACT's (adapters/grpc/library-statuses.ts).
    assert.equal(e.trailers?.get('x-service-code')[0], 'PAYLOAD_TOO_LARGE');
    assert.equal(e.trailers?.get('x-service-reason-code')[0], 'Request.BodyTooLarge');
    assert.match(String(e.trailers?.get('x-service-correlation-id')[0] ?? ''), /^[0-9a-f-]{36}$/);
    assert.equal((await admin.get('/api/items/count')).body.data.count, before);
    await stillUp();
  });
});
