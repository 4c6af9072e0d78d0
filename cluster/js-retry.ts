/**
 * JetStream calls fail for a few seconds while a stream or meta leader is
 * elected (nats-server 2.9 measured 2–7 s: `timeout`, `jetstream is not
 * enabled`, no responders). Those are retried until the deadline; anything
 * else is a real error and fails at once.
 */
const TRANSIENT = /timeout|TIMEOUT|not enabled|no responders|503|NoResponders|leader|temporarily|connection (closed|draining)|DISCONNECT|ECONNREFUSED|insufficient resources|stream not found \(transient\)/i;

export function isTransientJetStreamError(err: unknown): boolean {
  const text = err instanceof Error ? `${err.name} ${err.message} ${String((err as { code?: unknown }).code ?? '')}` : String(err);
  return TRANSIENT.test(text);
}

export async function retryJetStream<T>(fn: () => Promise<T>, opts: { deadlineMs?: number; delayMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (opts.deadlineMs ?? 15_000);
  let delay = opts.delayMs ?? 100;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransientJetStreamError(err) || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1_000);
    }
  }
}
