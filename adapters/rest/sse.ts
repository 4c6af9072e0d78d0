import type { ResultStream, StreamSink } from '../../runtime/operations/types.js';
import type { ReplyTarget } from './reply-target.js';

export interface SseOptions {
  /** Comment line sent when nothing else was, so proxies and clients see a live connection. */
  heartbeatMs: number;
  /**
   * Bytes we hold for a client that reads too slowly (uWS holds at most one
   * more chunk). Past it the client is dropped: the stream ends with a
   * comment saying so, and the client resumes with Last-Event-ID.
   */
  maxBufferedBytes: number;
  /** SSE `retry:` sent first: how long a client waits before reconnecting. */
  retryMs: number;
}

export const SSE_DEFAULTS: SseOptions = { heartbeatMs: 15_000, maxBufferedBytes: 1024 * 1024, retryMs: 2_000 };

/** Streams open on this process (diagnostics and tests). */
export const sseStreams = { open: 0, dropped: 0 };

/** One SSE field value per line: a newline inside a value would start a new field. */
const oneLine = (s: string): string => (s.includes('\n') || s.includes('\r') ? s.replace(/\r\n|\r|\n/g, ' ') : s);

/**
 * Writes a streaming Result as `text/event-stream` on a uWS response. Every
 * write is corked; backpressure is respected (once uWS reports it, events
 * queue here until onWritable, up to a bound, then the client is dropped);
 * the producer's close function runs exactly once, on client abort, drop,
 * producer end or server shutdown (app.close() aborts open responses).
 */
export function writeStream(t: ReplyTarget, status: string, headers: Record<string, string> | undefined, stream: ResultStream, opts: SseOptions = SSE_DEFAULTS): void {
  if (t.aborted) {
    stream.discard?.();
    return;
  }
  const res = t.res;
  let open = true;
  let blocked = false;
  let queue: string[] = [];
  let queued = 0;
  let lastWrite = Date.now();
  let closeProducer: (() => void) | null = null;
  let producerClosed = false;
  sseStreams.open++;

  const stopProducer = (): void => {
    if (producerClosed) return;
    producerClosed = true;
    const c = closeProducer;
    closeProducer = null;
    try {
      c?.();
    } catch {
      /* a producer's close must not take the server down */
    }
  };
  const finish = (): void => {
    if (!open) return;
    open = false;
    sseStreams.open--;
    clearInterval(heartbeat);
    queue = [];
    queued = 0;
    stopProducer();
  };
  /** Ends the response (when it is still ours) after an optional last chunk. */
  const endWith = (last: string): void => {
    if (!open) return;
    finish();
    if (t.aborted) return;
    res.cork(() => {
      if (last !== '') res.write(last);
      res.end(undefined, true);
    });
  };
  const raw = (chunk: string): void => {
    let ok = true;
    res.cork(() => {
      ok = res.write(chunk);
    });
    lastWrite = Date.now();
    if (!ok) blocked = true;
  };
  const write = (chunk: string): boolean => {
    if (!open || t.aborted) return false;
    if (!blocked) {
      raw(chunk);
      return true;
    }
    if (queued + chunk.length > opts.maxBufferedBytes) {
      sseStreams.dropped++;
      // uWS still holds what it could not send; this small last chunk joins it.
      endWith(': dropped: the client read too slowly; reconnect with Last-Event-ID\n\n');
      return false;
    }
    queue.push(chunk);
    queued += chunk.length;
    return true;
  };

  t.onAbort = finish;
  res.onWritable(() => {
    if (!open) return true;
    blocked = false;
    if (queue.length > 0) {
      const chunk = queue.join('');
      queue = [];
      queued = 0;
      // A throw here would escape into uWS; drop the stream instead.
      try {
        raw(chunk);
      } catch {
        finish();
      }
    }
    return true;
  });

  res.cork(() => {
    res.writeStatus(status);
    res.writeHeader('X-Service-Correlation-Id', t.correlationId);
    if (t.publicationVersion !== undefined) res.writeHeader('X-Service-Publication-Version', String(t.publicationVersion));
    if (t.cors !== null) {
      res.writeHeader('Access-Control-Allow-Origin', t.cors);
      res.writeHeader('Access-Control-Expose-Headers', 'X-Service-Correlation-Id');
    }
    if (headers !== undefined) for (const k in headers) if (k.toLowerCase() !== 'content-type') res.writeHeader(k, headers[k]!);
    res.writeHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.writeHeader('Cache-Control', 'no-cache, no-transform');
    res.writeHeader('X-Accel-Buffering', 'no');
    // The first write sends the headers: the client sees `open` before any event.
    if (!res.write(`retry: ${opts.retryMs}\n: open\n\n`)) blocked = true;
  });

  const heartbeat = setInterval(() => {
    try {
      if (Date.now() - lastWrite >= opts.heartbeatMs - 50) write(': heartbeat\n\n');
    } catch {
      finish(); // a timer's throw is an uncaught exception: end this stream, not the process
    }
  }, opts.heartbeatMs);
  heartbeat.unref();

  /** Producers call the sink from their own callbacks (timers, broker messages): a throw there ends this stream only. */
  const guarded = <A extends unknown[], R>(fn: (...a: A) => R, fallback: R) => (...a: A): R => {
    try {
      return fn(...a);
    } catch {
      finish();
      return fallback;
    }
  };
  const sink: StreamSink = {
    send: guarded((event: string, data: string, id?: string) => write(`${id === undefined ? '' : `id: ${oneLine(id)}\n`}event: ${oneLine(event)}\ndata: ${oneLine(data)}\n\n`), false),
    comment: guarded((text: string) => {
      write(`: ${oneLine(text)}\n\n`);
    }, undefined),
    end: guarded(() => endWith(''), undefined),
  };
  let close: () => void;
  try {
    close = stream.open(sink);
  } catch {
    endWith(': error: the stream could not start\n\n');
    stream.discard?.();
    return;
  }
  if (!open) {
    // The producer ended (or the client went away) while opening.
    try {
      close();
    } catch {
      /* ignore */
    }
    return;
  }
  closeProducer = close;
}
