import type { HttpResponse } from 'uWebSockets.js';

/** One HTTP response in progress: where write.ts and sse.ts write, and what they know of the request. */
export interface ReplyTarget {
  res: HttpResponse;
  aborted: boolean;
  correlationId: string;
  cors: string | null;
  closeConnection: boolean;
  /** The request's method (the size refusal words itself differently for a write). */
  method: string;
  /** Largest JSON response body (MAX_RESPONSE_BYTES); a larger one answers 422 Response.TooLarge instead. */
  maxResponseBytes: number;
  /** Set once the status line is written: after that only closing the connection can signal a failure. */
  started?: boolean;
  /** Set by a streaming response or an abortable operation; the handler's onAborted calls it (uWS keeps one abort handler per response). */
  onAbort?: () => void;
  /** The route's error shape (OperationSpec.errorShape): GraphQL's `errors[]` instead of the REST envelope. */
  errorShape?: 'graphql';
  /** The publication that served the request (`X-Service-Publication-Version`); absent before a scope was resolved. */
  publicationVersion?: number;
}
