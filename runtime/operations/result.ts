/** Canonical result: adapters project it; REST writes status, headers and body as JSON. */
export interface Result {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A stream of events instead of a body (REST: `text/event-stream`); `body` is then ignored. */
  stream?: ResultStream;
}

/** Where a streaming result writes; the adapter owns framing, heartbeats and backpressure. */
export interface StreamSink {
  /**
   * Queues one event. False once the stream is over: the client went away,
   * or it read too slowly and was dropped (its buffer passed the adapter's
   * bound). The producer should stop; its close function is called anyway.
   */
  send(event: string, data: string, id?: string): boolean;
  comment(text: string): void;
  /** Ends the stream from the producer's side. */
  end(): void;
}

export interface ResultStream {
  /** Starts producing; returns the function the adapter calls exactly once when the stream ends for any reason (abort, drop, end, server shutdown). */
  open(sink: StreamSink): () => void;
  /** Called instead of `open` when the stream never starts (the client left before it could): what it holds is given back. */
  discard?(): void;
}

