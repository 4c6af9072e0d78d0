import type { HttpResponse } from 'uWebSockets.js';
import { httpStatusOf, toErrorEnvelope } from '../../runtime/errors/envelope.js';
import type { ServiceError } from '../../runtime/errors/service-error.js';
import type { Result } from '../../runtime/operations/types.js';
import { statusLine } from './status-text.js';
import { writeStream } from './sse.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export interface ReplyTarget {
  res: HttpResponse;
  aborted: boolean;
  correlationId: string;
  cors: string | null;
  closeConnection: boolean;
  /** Set by a streaming response; the handler's onAborted calls it (uWS keeps one abort handler per response). */
  onAbort?: () => void;
}

function send(t: ReplyTarget, status: number, headers: Record<string, string> | undefined, body: string | null, contentType: string): void {
  if (t.aborted) return;
  t.res.cork(() => {
    t.res.writeStatus(statusLine(status));
    t.res.writeHeader('X-Service-Correlation-Id', t.correlationId);
    if (t.cors !== null) {
      t.res.writeHeader('Access-Control-Allow-Origin', t.cors);
      t.res.writeHeader('Access-Control-Expose-Headers', 'ETag, X-Service-Correlation-Id, Idempotent-Replayed');
    }
    if (headers !== undefined) for (const k in headers) t.res.writeHeader(k, headers[k]!);
    if (body === null) t.res.endWithoutBody(0, t.closeConnection);
    else {
      t.res.writeHeader('Content-Type', contentType);
      t.res.end(body, t.closeConnection);
    }
  });
}

export function writeResult(t: ReplyTarget, r: Result): void {
  if (r.stream !== undefined) return writeStream(t, statusLine(r.status), r.headers, r.stream);
  if (r.status === 204 || r.body === undefined) return send(t, r.status, r.headers, null, '');
  const explicitType = r.headers?.['Content-Type'];
  if (typeof r.body === 'string' && explicitType !== undefined) {
    const { 'Content-Type': _, ...rest } = r.headers!;
    return send(t, r.status, rest, r.body, explicitType);
  }
  send(t, r.status, r.headers, JSON.stringify(r.body), JSON_TYPE);
}

export function writeError(t: ReplyTarget, err: ServiceError, basePath: string): void {
  send(t, httpStatusOf(err), err.details.headers, JSON.stringify(toErrorEnvelope(err, t.correlationId, basePath)), JSON_TYPE);
}
