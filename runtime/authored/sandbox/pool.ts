/**
 * The sandbox pool (CONTRACT "Sandbox and limits"): a piscina pool of worker
 * threads, one invocation per worker at a time, each in a fresh QuickJS
 * sandbox (invocation.ts). This side forwards the sandbox's host calls to the
 * request's HostBridge over a MessagePort, and holds the one limit a worker
 * cannot enforce on itself: a worker that stops answering (its loop wedged)
 * is killed by aborting its task a grace period after its wall-clock limit.
 */
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../../log.js';
import { SandboxBusyError, type AuthoredPool, type HostAnswer, type HostBridge, type InvokeOutcome, type InvokeRequest } from '../types.js';
import type { AnswerMessage, SandboxTask, WorkerMessage } from './protocol.js';

/** How long past its wall-clock limit a silent worker is given before it is terminated. */
export const BACKSTOP_GRACE_MS = 2_000;
/** The longest a replaced or closing pool waits for its invocations: the longest wall-clock limit (60 s) and the grace. */
const CLOSE_TIMEOUT_MS = 60_000 + BACKSTOP_GRACE_MS;

/** Invocations that may wait for a worker, per worker: beyond, an invocation is refused at once (503) instead of queueing without bound. */
export const QUEUED_PER_WORKER = 32;

export interface SandboxPoolOptions {
  workers: number;
  log?: Logger;
  /** Invocations that may wait for a worker; default QUEUED_PER_WORKER per worker. */
  maxQueue?: number;
}

export function createSandboxPool(opts: SandboxPoolOptions): AuthoredPool {
  const workers = Math.max(1, Math.floor(opts.workers));
  const maxQueue = Math.max(0, Math.floor(opts.maxQueue ?? workers * QUEUED_PER_WORKER));
  const filename = new URL('./worker.js', import.meta.url).href;
  const start = (): Piscina<SandboxTask, InvokeOutcome> => {
    const p = new Piscina<SandboxTask, InvokeOutcome>({
      filename, minThreads: workers, maxThreads: workers, concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY, closeTimeout: CLOSE_TIMEOUT_MS, recordTiming: false,
      // 'async': an idle worker's event loop runs (Atomics.waitAsync), so it can make its next sandbox while it waits (prepared.ts);
      // with 'sync' it would block in Atomics.wait and make it only once the next task had arrived.
      atomics: 'async',
    });
    // piscina reports a close that timed out as 'error'; unheard, an EventEmitter error would throw.
    p.on('error', (err: unknown) => opts.log?.warn('sandbox pool error', { error: err instanceof Error ? err.message : String(err) }));
    return p;
  };
  let current = start();
  const retiring = new Set<Promise<void>>();
  let closed = false;

  const retire = (p: Piscina): void => {
    const done = p.close().catch((err: unknown) => opts.log?.warn('sandbox workers not closed', { error: err instanceof Error ? err.message : String(err) }));
    retiring.add(done);
    void done.finally(() => retiring.delete(done));
  };

  return {
    invoke(req) {
      if (closed) return Promise.reject(new Error('the sandbox pool is closed'));
      // Memory and waiting time stay bounded under a flood: the queue has a size, and a full one refuses before any work.
      if (current.queueSize >= maxQueue) return Promise.reject(new SandboxBusyError());
      return invokeOn(current, req, opts.log);
    },
    reset() {
      if (closed) return Promise.resolve();
      const old = current;
      current = start();
      // Invocations already on the old workers finish there (bounded by their wall-clock limit and the backstop).
      retire(old);
      return Promise.resolve();
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([current.destroy(), ...retiring]);
    },
  };
}

async function invokeOn(pool: Piscina<SandboxTask, InvokeOutcome>, req: InvokeRequest, log: Logger | undefined): Promise<InvokeOutcome> {
  const { port1, port2 } = new MessageChannel();
  const abort = new AbortController();
  // The host's own stop (a PGlite transaction held too long: runtime/operations/authored/spec.ts) ends it like the backstop.
  const stop = (): void => abort.abort();
  if (req.signal?.aborted === true) stop();
  else req.signal?.addEventListener('abort', stop, { once: true });
  let backstop: NodeJS.Timeout | null = null;
  let startedAt = 0;
  port1.on('message', (m: WorkerMessage) => {
    if (m.kind === 'started') {
      startedAt = performance.now();
      backstop = setTimeout(() => abort.abort(), req.limits.wallMs + BACKSTOP_GRACE_MS);
      return;
    }
    void answer(req.host, m.target, m.args, log).then((a) => {
      try {
        port1.postMessage({ id: m.id, answer: a } satisfies AnswerMessage);
      } catch {
        // The invocation ended first (a limit): nobody waits for this answer.
      }
    });
  });
  const task: SandboxTask = {
    code: req.code, exportName: req.exportName, inputJson: JSON.stringify(req.input ?? null) ?? 'null',
    ctx: req.ctx, limits: req.limits, port: port2,
  };
  try {
    return await pool.run(task, { transferList: [port2], signal: abort.signal });
  } catch (err) {
    if (abort.signal.aborted) {
      const ms = startedAt === 0 ? 0 : Math.round(performance.now() - startedAt);
      if (req.signal?.aborted !== true) log?.warn('sandbox worker terminated past its wall-clock limit', { correlationId: req.ctx.correlationId, wallMs: ms });
      // The worker died with its counters: its whole time is charged as CPU.
      return { ok: false, failure: { kind: 'wallClockLimit' }, usage: { cpuMs: ms, wallMs: ms, peakMemoryBytes: 0 } };
    }
    log?.error('sandbox worker failed', { correlationId: req.ctx.correlationId, error: err instanceof Error ? err.message : String(err) });
    const ms = startedAt === 0 ? 0 : Math.round(performance.now() - startedAt);
    return { ok: false, failure: { kind: 'threw', message: 'the sandbox worker failed' }, usage: { cpuMs: ms, wallMs: ms, peakMemoryBytes: 0 } };
  } finally {
    req.signal?.removeEventListener('abort', stop);
    if (backstop !== null) clearTimeout(backstop);
    port1.close();
  }
}

async function answer(host: HostBridge, target: string, args: unknown[], log: Logger | undefined): Promise<HostAnswer> {
  try {
    return await host.call({ target, args });
  } catch (err) {
    log?.error('host call failed', { target, error: err instanceof Error ? err.message : String(err) });
    return { ok: false, error: { code: 'INTERNAL', reasonCode: 'Handler.HostCallFailed', status: 500, message: 'the host call failed' } };
  }
}
