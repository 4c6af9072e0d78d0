import { randomUUID } from 'node:crypto';
import type { HttpRequest } from 'uWebSockets.js';

/** Everything the adapter needs from the uWS request, copied out before any await (uWS forbids later access). */
export interface RequestMeta {
  method: string;
  url: string;
  query: string;
  authorization: string;
  contentType: string;
  contentLength: string;
  tenant: string;
  project: string;
  branch: string;
  idempotencyKey: string;
  ifMatch: string;
  correlationId: string;
  origin: string;
}

const CORRELATION = /^[A-Za-z0-9._:-]{8,128}$/;

export function readMeta(req: HttpRequest): RequestMeta {
  const incoming = req.getHeader('x-service-correlation-id');
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    url: req.getUrl(),
    query: req.getQuery() ?? '',
    authorization: req.getHeader('authorization'),
    contentType: req.getHeader('content-type'),
    contentLength: req.getHeader('content-length'),
    tenant: req.getHeader('x-service-tenant'),
    project: req.getHeader('x-service-project'),
    branch: req.getHeader('x-service-branch'),
    idempotencyKey: req.getHeader('idempotency-key'),
    ifMatch: req.getHeader('if-match'),
    // A caller-supplied id is kept when it is well-formed, so traces join up across services.
    correlationId: CORRELATION.test(incoming) ? incoming : randomUUID(),
    origin: req.getHeader('origin'),
  };
}

/** `Bearer <token>` → token; anything else → null. */
export function bearerOf(authorization: string): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return m === null ? null : m[1]!;
}

/** First value per name; malformed percent-escapes are kept literally by URLSearchParams. */
export function parseQuery(query: string): Map<string, string> {
  const out = new Map<string, string>();
  if (query === '') return out;
  for (const [k, v] of new URLSearchParams(query)) if (!out.has(k)) out.set(k, v);
  return out;
}
