import { accessDenied, ServiceError, validationFailed } from '../errors/service-error.js';
import type { Services } from '../services.js';
import { checkTarget } from '../webhooks/outbound/url-guard.js';
import { readEgress } from './egress-hosts.js';
import { answering } from './host-answer.js';
import type { HostAnswer, HostCall } from './types.js';

/** CONTRACT "Sandbox and limits": a `ctx.fetch` that has no answer after 30 s → 504 UPSTREAM_TIMEOUT. */
export const EGRESS_TIMEOUT_MS = 30_000;
/** The largest response body `ctx.fetch` reads (5 MiB); a longer one → 413 `Egress.ResponseTooLarge` (the sandbox's heap is 64–128 MiB). */
export const MAX_EGRESS_RESPONSE_BYTES = 5 * 1024 * 1024;
/** The largest request body a handler may send (1 MiB of text). */
export const MAX_EGRESS_REQUEST_BYTES = 1024 * 1024;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** What `ctx.fetch` answers the sandbox: the sandbox wraps it into `{ status, headers, text(), json() }`. */
export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface Request {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | null;
}

const denied = (host: string, why: string): ServiceError => accessDenied('Egress.HostNotAllowed', `ctx.fetch may not reach '${host}': ${why}`);

/** `[url, init?]` with init `{ method?, headers?, body? }` (headers an object of strings, body a string): anything else → 422. */
function readRequest(args: unknown[]): Request {
  const [rawUrl, rawInit] = args;
  if (typeof rawUrl !== 'string') throw validationFailed('Egress.InvalidUrl', 'ctx.fetch takes a URL string', 'url');
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw validationFailed('Egress.InvalidUrl', 'ctx.fetch takes an absolute http or https URL', 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationFailed('Egress.InvalidUrl', 'ctx.fetch reaches http and https URLs only', 'url');
  if (url.username !== '' || url.password !== '') throw validationFailed('Egress.InvalidUrl', 'the URL must not carry credentials (send them in a header)', 'url');
  const init = (rawInit ?? {}) as { method?: unknown; headers?: unknown; body?: unknown };
  if (typeof init !== 'object' || Array.isArray(init)) throw validationFailed('Egress.InvalidInit', 'init is an object { method, headers, body }', 'init');
  const method = init.method === undefined ? 'GET' : String(init.method).toUpperCase();
  if (!METHODS.has(method)) throw validationFailed('Egress.InvalidInit', `method must be one of ${[...METHODS].join(', ')}`, 'init.method');
  const headers: Record<string, string> = {};
  if (init.headers !== undefined && init.headers !== null) {
    if (typeof init.headers !== 'object' || Array.isArray(init.headers)) throw validationFailed('Egress.InvalidInit', 'headers is an object of strings', 'init.headers');
    for (const [k, v] of Object.entries(init.headers)) {
      if (typeof v !== 'string') throw validationFailed('Egress.InvalidInit', `header '${k.slice(0, 64)}' must be a string`, 'init.headers');
      headers[k] = v;
    }
    try {
      new Headers(headers);
    } catch {
      throw validationFailed('Egress.InvalidInit', 'a header name or value is not valid HTTP', 'init.headers');
    }
  }
  let body: string | null = null;
  if (init.body !== undefined && init.body !== null) {
    if (typeof init.body !== 'string') throw validationFailed('Egress.InvalidInit', 'body is a string (JSON.stringify an object first)', 'init.body');
    if (Buffer.byteLength(init.body) > MAX_EGRESS_REQUEST_BYTES) throw validationFailed('Egress.InvalidInit', `body is at most ${MAX_EGRESS_REQUEST_BYTES} bytes`, 'init.body');
    if (method === 'GET' || method === 'HEAD') throw validationFailed('Egress.InvalidInit', `a ${method} request has no body`, 'init.body');
    body = init.body;
  }
  return { url, method, headers, body };
}

/** The allow-list, then the webhook SSRF rules (the same resolution check outbound webhooks run before each delivery). */
async function admit(services: Services, projectId: string, url: URL): Promise<void> {
  const host = url.hostname.toLowerCase();
  const { allowedHosts } = await readEgress(services.db, projectId);
  if (!allowedHosts.includes(host)) throw denied(host, 'it is not in the project\'s egress allow-list (PUT /api/AuthoredRuntime/egress)');
  try {
    await checkTarget(url, services.webhooks?.allowPrivateTargets ?? false);
  } catch (err) {
    if (ServiceError.is(err) && err.reasonCode === 'Webhook.PrivateTarget') throw denied(host, 'it is, or resolves to, a loopback, link-local or private address (WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows it)');
    if (ServiceError.is(err) && err.reasonCode === 'Webhook.UnresolvableTarget') throw new ServiceError('UNAVAILABLE', 'Egress.Unresolvable', `'${host}' does not resolve`);
    throw err;
  }
}

/** Reads the body as text up to MAX_EGRESS_RESPONSE_BYTES, cancelling the stream past it. */
async function boundedText(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_EGRESS_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      throw new ServiceError('PAYLOAD_TOO_LARGE', 'Egress.ResponseTooLarge', `the response body is larger than ${MAX_EGRESS_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function send(req: Request): Promise<EgressResponse> {
  const signal = AbortSignal.timeout(EGRESS_TIMEOUT_MS);
  try {
    // redirect: 'manual': a redirect is answered as is; following it blindly would reach a host nobody checked.
    const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual', signal });
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => { headers[k] = v; });
    return { status: res.status, headers, body: await boundedText(res) };
  } catch (err) {
    if (ServiceError.is(err)) throw err;
    if (signal.aborted) throw new ServiceError('UPSTREAM_TIMEOUT', 'Egress.Timeout', `${req.url.host} did not answer within ${EGRESS_TIMEOUT_MS / 1000} s`);
    throw new ServiceError('UNAVAILABLE', 'Egress.ConnectFailed', `${req.url.host} could not be reached`);
  }
}

/**
 * The `fetch` host target (`ctx.fetch(url, init)`, CONTRACT "Sandbox and limits" → Egress):
 * only hosts of the project's allow-list (any port), never a private address unless
 * WEBHOOK_ALLOW_PRIVATE_TARGETS=true; answers `{ status, headers, body }` (body as text). A
 * refusal is an answer the handler can catch: 403 `Egress.HostNotAllowed`, 504
 * `Egress.Timeout`, 413 `Egress.ResponseTooLarge`, 503 `Egress.ConnectFailed`, 422 for a bad call.
 */
export function authoredFetch(services: Services, projectId: string, call: HostCall): Promise<HostAnswer> {
  return answering(async () => {
    const req = readRequest(call.args);
    await admit(services, projectId, req.url);
    return send(req);
  });
}
