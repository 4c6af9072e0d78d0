/** One platform route as the OpenAPI document describes it (openapi-static.ts and its per-area parts). */
export interface StaticOp {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Open route: scope headers only, no credential. */
  open?: boolean;
  /** `admin`: the platform admin token only (others get 403); `public`: no credential at all. Default: any credential. */
  auth?: 'admin' | 'public';
  /** No tenant/project scope headers (the scope comes from the path, the token, or the query). */
  unscoped?: true;
  params?: string[];
  body?: string;
  status: 101 | 200 | 201 | 202 | 204;
  response?: string;
  /** Server-Sent Events stream instead of a JSON body. */
  stream?: true;
  /** SSE event name and the schema of its `data:` JSON. */
  sse?: { event: string; data: string };
  /** WebSocket upgrade (101) instead of a JSON body. */
  upgrade?: true;
  /** A document with an `ETag`: `If-None-Match` with the current tag answers 304 without a body. */
  conditional?: true;
  /** Success answer carries `Cache-Control: no-store`. */
  noStore?: true;
  errors: readonly number[];
}
