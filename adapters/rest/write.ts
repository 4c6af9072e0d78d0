import { httpStatusOf, toErrorEnvelope } from '../../runtime/errors/envelope.js';
import { maskError } from '../../runtime/errors/mask.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { Logger } from '../../runtime/log.js';
import type { Result } from '../../runtime/operations/types.js';
import { statusLine } from './status-text.js';
import { writeStream } from './sse.js';
import { stringifyWithin } from './bounded-json.js';
import type { ReplyTarget } from './reply-target.js';

export type { ReplyTarget } from './reply-target.js';

const JSON_TYPE = 'application/json; charset=utf-8';

function send(t: ReplyTarget, status: number, headers: Record<string, string> | undefined, body: string | Buffer | null, contentType: string): void {
  if (t.aborted) return;
  t.res.cork(() => {
    t.started = true;
    t.res.writeStatus(statusLine(status));
    t.res.writeHeader('X-Service-Correlation-Id', t.correlationId);
    if (t.publicationVersion !== undefined) t.res.writeHeader('X-Service-Publication-Version', String(t.publicationVersion));
    if (t.cors !== null) {
      t.res.writeHeader('Access-Control-Allow-Origin', t.cors);
      t.res.writeHeader('Access-Control-Expose-Headers', 'ETag, X-Service-Correlation-Id, X-Service-Publication-Version, Idempotent-Replayed');
    }
    if (headers !== undefined) for (const k in headers) t.res.writeHeader(k, headers[k]!);
    if (body === null) t.res.endWithoutBody(0, t.closeConnection);
    else {
      t.res.writeHeader('Content-Type', contentType);
      t.res.end(body, t.closeConnection);
    }
  });
}

/**
 * 422 for an answer past MAX_RESPONSE_BYTES. A write has been applied by the
 * time its answer is serialized: the message says so, so a client re-reads
 * (with fields=) rather than writing again.
 */
export const responseTooLarge = (max: number, method: string): ServiceError =>
  new ServiceError('VALIDATION_FAILED', 'Response.TooLarge', method === 'GET' || method === 'HEAD'
    ? `the response would be larger than ${max} bytes; ask for fewer rows (pageSize) or fewer fields (fields=)`
    : `the write was applied, but its answer would be larger than ${max} bytes; read the row with fields= to see it`);

export function writeResult(t: ReplyTarget, r: Result, basePath = '/api'): void {
  if (r.stream !== undefined) return writeStream(t, statusLine(r.status), r.headers, r.stream);
  if (r.status === 204 || r.body === undefined) return send(t, r.status, r.headers, null, '');
  const explicitType = r.headers?.['Content-Type'];
  // A document (text) or raw bytes (a source-asset download) in the media type the operation set.
  if ((typeof r.body === 'string' || Buffer.isBuffer(r.body)) && explicitType !== undefined) {
    const { 'Content-Type': _, ...rest } = r.headers!;
    return send(t, r.status, rest, r.body, explicitType);
  }
  const text = stringifyWithin(r.body, t.maxResponseBytes);
  if (text === null) return writeError(t, responseTooLarge(t.maxResponseBytes, t.method), basePath);
  send(t, r.status, r.headers, text, JSON_TYPE);
}

export function writeError(t: ReplyTarget, err: ServiceError, basePath: string): void {
  const envelope = toErrorEnvelope(err, t.correlationId, basePath);
  if (t.errorShape !== 'graphql') return send(t, httpStatusOf(err), err.details.headers, JSON.stringify(envelope), JSON_TYPE);
  // GraphQL over HTTP answers a request it could not read (bad JSON, no query) 400, as it does document errors.
  const status = err.code === 'VALIDATION_FAILED' ? 400 : httpStatusOf(err);
  send(t, status, err.details.headers, JSON.stringify(asGraphQLErrors(envelope.error)), JSON_TYPE);
}

/** A refusal of a whole GraphQL request (no credential, bad JSON, body too large) in GraphQL's shape (CONTRACT: GraphQL errors). */
function asGraphQLErrors(e: ReturnType<typeof toErrorEnvelope>['error']): { errors: unknown[] } {
  const { message, code, reasonCode, correlationId, field, explainUrl, retryable } = e;
  return { errors: [{ message, extensions: { code, reasonCode, correlationId, ...(field === undefined ? {} : { field }), ...(retryable ? { retryable } : {}), explainUrl } }] };
}

/**
 * The last line of defence for an exception that escaped everything else in a
 * request's life (routing, body reading, dispatch, serialization): it is
 * logged with the correlation id and answered 500 INTERNAL, never left to
 * reach uWS, where it would stop the process for every tenant. When the
 * status line is already out, the connection is closed instead.
 */
export function failUnexpected(t: ReplyTarget, err: unknown, log: Logger, basePath = '/api'): void {
  const error = maskError(err, t.correlationId, log);
  try {
    if (t.aborted) return;
    if (t.started === true) {
      t.aborted = true;
      t.res.close();
      return;
    }
    writeError(t, error, basePath);
  } catch (again) {
    log.error('could not answer a failed request', { correlationId: t.correlationId, error: String(again) });
  }
}
