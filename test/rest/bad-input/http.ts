/**
 * Raw HTTP helpers for the bad-input tests: requests with arbitrary bodies
 * (bytes, chunked, aborted) and the checks every answer must pass.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { errorOf, type Reply } from '../../support/client.js';

/** Where to send and the headers that scope a request to the test project. */
export interface Api {
  baseUrl: string;
  headers: Record<string, string>;
}

export interface SendOptions {
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Leave out the scope headers (authorization, tenant, project). */
  unscoped?: boolean;
}

/** One request through fetch; the body is sent as given (no implicit JSON encoding). */
export async function send(api: Api, method: string, path: string, opts: SendOptions = {}): Promise<Reply> {
  const headers = { ...(opts.unscoped === true ? {} : api.headers), ...opts.headers };
  const res = await fetch(api.baseUrl + path, { method, headers, ...(opts.body === undefined ? {} : { body: opts.body as BodyInit }) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: parseBody(text, res.headers.get('content-type'), `${method} ${path}`), text };
}

function parseBody(text: string, contentType: string | null, what: string): unknown {
  if (text === '' || !(contentType ?? '').includes('json')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    assert.fail(`${what}: a JSON content type with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

/** A response read through node:http (chunked uploads, explicit headers fetch would rewrite). */
export interface RawReply extends Reply {
  /** Error raised while uploading, if the server answered before the body was sent. */
  uploadError: string | null;
}

/**
 * POSTs `total` bytes with `Transfer-Encoding: chunked` (no Content-Length),
 * in chunks of `chunk` bytes, and returns the answer even if the server
 * answers and closes before the upload is done.
 */
export function postChunked(baseUrl: string, path: string, headers: Record<string, string>, total: number, chunk = 256 * 1024, fill = 0x20): Promise<RawReply> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let uploadError: string | null = null;
    let answered = false;
    const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path, headers: { ...headers, 'transfer-encoding': 'chunked' } });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: parseBody(text, h.get('content-type'), `POST ${path} (chunked)`), text, uploadError });
      });
      res.on('error', reject);
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      // EPIPE/ECONNRESET after the server answered early is expected; without an answer it is a failure.
      uploadError = e.code ?? e.message;
      setTimeout(() => reject(new Error(`chunked upload failed without an answer: ${uploadError}`)), 2000).unref();
    });
    const buf = Buffer.alloc(chunk, fill);
    let sent = 0;
    const pump = (): void => {
      // Like curl, stop sending once the server has answered: the server closes after an early 413,
      // and data sent into a closed socket makes the peer reset the connection, which can discard the answer.
      while (sent < total && !answered) {
        const n = Math.min(chunk, total - sent);
        sent += n;
        if (!req.write(n === chunk ? buf : buf.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Sends `parts` over a raw socket, pausing `delayMs` between them; resolves with the status line, or null when the server closed without answering. */
export function rawRequest(baseUrl: string, parts: string[], delayMs: number): Promise<string | null> {
  const u = new URL(baseUrl);
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let data = '';
    sock.on('data', (d: Buffer) => {
      data += d.toString('latin1');
    });
    sock.on('close', () => resolve(data === '' ? null : data.split('\r\n', 1)[0]!));
    sock.on('error', () => {});
    void (async () => {
      for (const p of parts) {
        sock.write(p);
        await new Promise((r) => setTimeout(r, delayMs));
      }
      setTimeout(() => sock.end(), 300);
    })();
  });
}

/**
 * Opens a raw socket, sends a request head promising `declared` body bytes,
 * sends only `partial`, then drops the connection: a client that dies mid-body.
 */
export function abortMidBody(baseUrl: string, path: string, headers: Record<string, string>, declared: number, partial: string): Promise<void> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => {
      const head = [`POST ${path} HTTP/1.1`, `Host: ${u.host}`, `Content-Length: ${declared}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      sock.write(`${head.join('\r\n')}\r\n\r\n${partial}`);
      setTimeout(() => {
        sock.destroy();
        resolve();
      }, 50);
    });
    sock.on('error', reject);
  });
}

/** Status → the spec's error code (CONTRACT Errors; 405/415 are this platform's additions). */
const CODE_OF_STATUS: Record<number, string> = {
  401: 'UNAUTHORIZED',
  403: 'ACCESS_DENIED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_FAILED',
  429: 'QUOTA_EXCEEDED',
};

export const describeInput = (v: unknown): string => {
  let s: string;
  try {
    s = typeof v === 'string' ? JSON.stringify(v) : v instanceof Uint8Array ? `bytes[${v.length}] ${Buffer.from(v.subarray(0, 60)).toString('hex')}` : JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 400 ? `${s.slice(0, 400)}… (${s.length} chars)` : s;
};

/**
 * What every answer must satisfy: never 5xx; the correlation header; a 4xx
 * is the error envelope whose correlationId is the header's and whose code
 * matches the status.
 */
export function checkReply(r: Reply, what: string): void {
  const ctx = (): string => `${what}\n  → ${r.status} ${r.text.slice(0, 400)}`;
  assert.ok(r.status >= 200 && r.status < 500, `status outside 2xx-4xx: ${ctx()}`);
  assert.ok(r.status < 300 || r.status >= 400, `unexpected 3xx: ${ctx()}`);
  const cid = r.headers.get('x-service-correlation-id');
  assert.ok(cid !== null && cid !== '', `missing X-Service-Correlation-Id: ${ctx()}`);
  if (r.status >= 400) {
    let e: ReturnType<typeof errorOf>;
    try {
      e = errorOf(r);
    } catch (err) {
      assert.fail(`${(err as Error).message}: ${ctx()}`);
    }
    assert.equal(e.correlationId, cid, `envelope correlationId differs from the header: ${ctx()}`);
    assert.equal(typeof e.message, 'string', `envelope without message: ${ctx()}`);
    const code = CODE_OF_STATUS[r.status];
    if (code !== undefined) assert.equal(e.code, code, `code does not match status: ${ctx()}`);
  }
}

export type ReasonMatch = string | RegExp | readonly string[];

const matches = (reason: string, m: ReasonMatch): boolean =>
  typeof m === 'string' ? reason === m : m instanceof RegExp ? m.test(reason) : m.includes(reason);

/** checkReply, then the exact status and (optionally) a reason code; returns the error object. */
export function expectError(r: Reply, what: string, status: number, reason?: ReasonMatch): ReturnType<typeof errorOf> & { errors?: Array<{ field: string; reasonCode: string }> } {
  checkReply(r, what);
  assert.equal(r.status, status, `expected ${status}: ${what}\n  → ${r.status} ${r.text.slice(0, 400)}`);
  const e = errorOf(r);
  if (reason !== undefined) {
    assert.ok(matches(e.reasonCode, reason), `expected reasonCode ${describeInput(reason instanceof RegExp ? String(reason) : reason)}, got ${e.reasonCode}: ${what}\n  → ${r.text.slice(0, 400)}`);
  }
  return e;
}

/** checkReply, then an exact success status. */
export function expectOk(r: Reply, what: string, status = 200): any {
  checkReply(r, what);
  assert.equal(r.status, status, `expected ${status}: ${what}\n  → ${r.status} ${r.text.slice(0, 400)}`);
  return r.body;
}
