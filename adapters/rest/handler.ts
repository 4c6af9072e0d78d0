import { randomUUID } from 'node:crypto';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { dispatch } from '../../runtime/dispatch.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { Invocation, OperationSpec } from '../../runtime/operations/types.js';
import { recordRefusal, UNROUTED } from '../../runtime/pipeline/refusal.js';
import type { Services } from '../../runtime/services.js';
import { decodeJsonBody } from './body.js';
import { bearerOf, parseQuery, readMeta, type RequestMeta } from './request-meta.js';
import { route, type RouteMatch } from './router.js';
import { failUnexpected, writeError, writeResult, type ReplyTarget } from './write.js';
import { framingProblem } from './framing.js';
import { entityArgsOfQuery } from '../../runtime/entities/entity-args.js';

export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface RestOptions {
  maxBodyBytes: number;
  /** Largest JSON response body (MAX_RESPONSE_BYTES, default 32 MiB). */
  maxResponseBytes?: number;
  corsOrigin: string | null;
  /** Unsent bytes past which a realtime WebSocket client is closed with 1013. Default 1 MiB. */
  realtimeMaxBufferedBytes?: number;
  /** MAX_UPLOAD_BYTES: lowers the limits operations declare for themselves (`maxBodyBytes`, source-asset uploads). */
  maxUploadBytes?: number;
}

/** The body limit of one operation: its own (`spec.maxBodyBytes`, capped by MAX_UPLOAD_BYTES), else MAX_BODY_BYTES. */
export const bodyLimitOf = (spec: OperationSpec, opts: RestOptions): number =>
  spec.maxBodyBytes === undefined ? opts.maxBodyBytes : Math.min(spec.maxBodyBytes, opts.maxUploadBytes ?? spec.maxBodyBytes);

const BASES = ['/api/', '/v1/'];

/** Tracks requests in flight so shutdown can drain them. */
export interface InFlight {
  count: number;
}

/** GraphQL's and gRPC's routes live at the root too (`/graphql/schema`, `/grpc/proto/…`, CONTRACT); they resolve as below `/api`. */
const ROOT_PREFIXES = ['/graphql/', '/graphql', '/grpc/'];

function splitPath(url: string): { base: string; segs: string[] } | null {
  const q = url.indexOf('?');
  const bare = q === -1 ? url : url.slice(0, q);
  if (ROOT_PREFIXES.some((p) => bare === p || (p.endsWith('/') && bare.startsWith(p)))) return splitPath(`/api${url}`);
  for (const b of BASES) {
    if (url.startsWith(b)) {
      try {
        return { base: b.slice(0, -1), segs: url.slice(b.length).split('/').map(decodeURIComponent) };
      } catch {
        return null; // malformed percent-encoding names no route
      }
    }
  }
  return null;
}

/**
 * The REST adapter: request → Invocation → dispatch() → response. It
 * decides nothing itself; routing picks the operation, the pipeline decides.
 */
export function restHandler(services: Services, opts: RestOptions, inFlight: InFlight) {
  const log = services.log;
  return (res: HttpResponse, req: HttpRequest): void => {
    const made: { target: ReplyTarget | null } = { target: null };
    try {
      accept(services, opts, inFlight, res, req, made);
    } catch (err) {
      // Thrown synchronously inside a uWS callback: it must not reach uWS (the process would stop).
      const target = made.target ?? { res, aborted: false, correlationId: randomUUID(), cors: opts.corsOrigin, closeConnection: true, method: '', maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES };
      failUnexpected(target, err, log);
    }
  };
}

/** Reads the request head, answers what needs no body, and starts reading the body; `made.target` is the reply target once there is one. */
function accept(services: Services, opts: RestOptions, inFlight: InFlight, res: HttpResponse, req: HttpRequest, made: { target: ReplyTarget | null }): void {
  // Conflicting framing headers: close before anything else (framing.ts says why no 400 is sent).
  if (framingProblem(req) !== null) {
    res.close();
    return;
  }
  const meta = readMeta(req);
  // Read before any await (uWS forbids req use later); only streaming operations look at it.
  const lastEventId = req.getHeader('last-event-id');
  const extraHeaders: Record<string, string> = {};
  const target: ReplyTarget = {
    res, aborted: false, correlationId: meta.correlationId, cors: opts.corsOrigin, closeConnection: false, method: meta.method,
    maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
  };
  made.target = target;
  let reading = false;
  /** Frees this request's in-flight slot once, whichever path ends it. */
  let released = false;
  const release = (): void => {
    if (!released) inFlight.count--;
    released = true;
  };
  res.onAborted(() => {
    target.aborted = true;
    target.onAbort?.();
    // Aborted mid-body: readBody never calls back, so release the in-flight slot here.
    if (reading) {
      reading = false;
      release();
    }
  });
  if (meta.method === 'OPTIONS' && opts.corsOrigin !== null) return preflight(target);
  const path = splitPath(meta.url);
  const matched = path === null ? new ServiceError('NOT_FOUND', 'Route.Unknown', 'no route matches this path') : route(meta.method, path.segs);
  const basePath = path?.base ?? '/api';
  /** Answers a refusal made here, before dispatch, and has it recorded for its explainUrl. */
  const refuse = (err: ServiceError, spec: OperationSpec): void => {
    writeError(target, err, basePath);
    recordRefusal(services, refusalInvocation(meta, spec, basePath), err);
  };
  if (matched instanceof ServiceError) {
    // Drain any body the client sends, but answer without reading it.
    return refuse(matched, UNROUTED);
  }
  if (matched.spec.errorShape !== undefined) target.errorShape = matched.spec.errorShape;
  for (const h of matched.spec.requestHeaders ?? []) extraHeaders[h] = req.getHeader(h);
  const declared = Number(meta.contentLength);
  const limit = bodyLimitOf(matched.spec, opts);
  if (meta.contentLength !== '' && (!Number.isFinite(declared) || declared > limit)) {
    target.closeConnection = true;
    return refuse(tooLarge(limit), matched.spec);
  }
  inFlight.count++;
  reading = true;
  readBody(res, limit, (bytes) => {
    reading = false;
    if (bytes === null) {
      release();
      // Lingering close: answer now and keep the connection, so uWS discards the rest of
      // the chunked body instead of resetting a client that is still sending (which can
      // make it lose the 413). Nothing more is buffered.
      return refuse(tooLarge(limit), matched.spec);
    }
    run(services, meta, matched, basePath, bytes, target, lastEventId, extraHeaders)
      .catch((err: unknown) => failUnexpected(target, err, services.log, basePath))
      .finally(release);
  }, (err) => {
    reading = false;
    release();
    failUnexpected(target, err, services.log, basePath);
  });
}

async function run(services: Services, meta: RequestMeta, m: RouteMatch, basePath: string, bytes: Buffer, target: ReplyTarget, lastEventId: string, extraHeaders: Record<string, string>): Promise<void> {
  let body: unknown;
  const raw = m.spec.rawBody === true;
  try {
    // A raw-body spec (inbound webhooks) gets the exact bytes: it verifies them before it parses.
    body = raw ? undefined : decodeJsonBody(bytes, meta.contentType);
  } catch (err) {
    writeError(target, err as ServiceError, basePath);
    return recordRefusal(services, refusalInvocation(meta, m.spec, basePath), err as ServiceError);
  }
  const query = parseQuery(meta.query);
  // An abortable operation (GraphQL.Request) stops its statements when the client disconnects.
  let signal: AbortSignal | undefined;
  if (m.spec.abortable === true) {
    const gone = new AbortController();
    if (target.aborted) gone.abort();
    else target.onAbort = () => gone.abort();
    signal = gone.signal;
  }
  const inv: Invocation = {
    correlationId: meta.correlationId,
    protocol: 'rest',
    operation: m.spec,
    collection: m.collection,
    relation: m.relation,
    params: m.params,
    query,
    args: entityArgsOfQuery(query),
    body,
    bearer: bearerOf(meta.authorization),
    tenantHeader: meta.tenant === '' ? null : meta.tenant,
    projectHeader: meta.project === '' ? null : meta.project,
    branchHeader: meta.branch === '' ? null : meta.branch,
    idempotencyKey: meta.idempotencyKey === '' ? null : meta.idempotencyKey,
    ifMatch: meta.ifMatch === '' ? null : meta.ifMatch,
    basePath,
    lastEventId: lastEventId === '' ? null : lastEventId,
    clientAddress: target.aborted ? null : Buffer.from(target.res.getRemoteAddressAsText()).toString(),
    ...(raw ? { rawBody: bytes } : {}),
    ...(m.spec.requestHeaders === undefined ? {} : { headers: extraHeaders }),
    ...(signal === undefined ? {} : { signal }),
  };
  const outcome = await dispatch(inv, services);
  if (outcome.publicationVersion !== undefined) target.publicationVersion = outcome.publicationVersion;
  if (outcome.ok) writeResult(target, outcome.result, basePath);
  else writeError(target, outcome.error, basePath);
}

/** The Invocation of a request refused before dispatch: enough to name its caller and operation in the record. */
function refusalInvocation(meta: RequestMeta, operation: OperationSpec, basePath: string): Invocation {
  return {
    correlationId: meta.correlationId, protocol: 'rest', operation, collection: null, relation: null, params: {}, query: new Map(), body: undefined,
    bearer: bearerOf(meta.authorization), tenantHeader: null, projectHeader: null, branchHeader: null, idempotencyKey: null, ifMatch: null, basePath,
  };
}

const tooLarge = (max: number): ServiceError =>
  new ServiceError('PAYLOAD_TOO_LARGE', 'Request.BodyTooLarge', `request body larger than ${max} bytes; use Storage upload for large payloads`);

/**
 * Collects the body, copying each chunk (uWS reuses the buffer); null once it
 * passes `max` bytes. A throw inside the uWS data callback goes to `failed`.
 */
export function readBody(res: HttpResponse, max: number, done: (bytes: Buffer | null) => void, failed: (err: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    if (over) return;
    try {
      size += chunk.byteLength;
      if (size > max) {
        over = true;
        done(null);
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    } catch (err) {
      over = true;
      failed(err);
    }
  });
}

function preflight(t: ReplyTarget): void {
  t.res.cork(() => {
    t.res.writeStatus('204 No Content');
    t.res.writeHeader('Access-Control-Allow-Origin', t.cors!);
    t.res.writeHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
    t.res.writeHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Service-Tenant, X-Service-Project, X-Service-Branch, Idempotency-Key, If-Match, X-Service-Correlation-Id');
    t.res.writeHeader('Access-Control-Max-Age', '600');
    t.res.endWithoutBody(0);
  });
}
