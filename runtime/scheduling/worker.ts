import type { Logger } from '../log.js';
import type { Services } from '../services.js';
import { runAttempt, type StopReason } from './attempt.js';
import { cancelRequested, claimRuns, claimSerialRun, renewLeases, type ClaimedAttempt } from './claim.js';
import { SuccessBatch } from './success-batch.js';
import { SCHEDULING_TIMING, type SchedulingRuntime } from './types.js';

interface Running {
  abort: AbortController;
  reason: StopReason | null;
  done: Promise<void>;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Attempts in flight per sandbox worker: more than one, so that one attempt's
 * database round trips (claim, scope, finish) overlap another's handler; far
 * fewer than the pool's queue per worker (sandbox/pool.ts QUEUED_PER_WORKER,
 * 32), so background runs never fill the queue a request's invocation is
 * refused from (503 Handler.Busy).
 */
export const ATTEMPTS_PER_SANDBOX_WORKER = 8;

/**
 * Every node's ScheduledJobWorker (CONTRACT "Scheduling"): claims due queued
 * runs up to its capacity (ATTEMPTS_PER_SANDBOX_WORKER per sandbox worker;
 * claim.ts: the free slots' worth of runs in one statement, then serial runs
 * one by one), runs each attempt
 * (attempt.ts), renews their leases, and stops an attempt whose run was asked
 * to cancel (within `cancelPollMs`) or whose lease another node's dispatcher
 * took over. Looks for work every `workerPollMs` and at once on `kick()`.
 * On stop, running attempts are abandoned: their leases run out and the
 * dispatcher queues their runs again.
 */
export class ScheduledJobWorker implements SchedulingRuntime {
  readonly nodeId: string;
  private readonly running = new Map<string, Running>();
  private readonly timers: NodeJS.Timeout[] = [];
  private claiming = false;
  private again = false;
  private stopped = true;
  private readonly capacity: number;
  private readonly successes: SuccessBatch;

  constructor(private readonly services: () => Services, sandboxWorkers: number, nodeId: string, private readonly log: Logger) {
    this.nodeId = nodeId;
    this.capacity = Math.max(1, sandboxWorkers) * ATTEMPTS_PER_SANDBOX_WORKER;
    this.successes = new SuccessBatch(() => this.services().db, () => this.services().outbox.kick());
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const every = (ms: number, fn: () => Promise<void>): void => {
      const t = setInterval(() => void fn().catch((err: unknown) => this.log.warn('scheduling worker step failed', { error: message(err) })), ms);
      t.unref();
      this.timers.push(t);
    };
    every(SCHEDULING_TIMING.workerPollMs, () => this.claim());
    every(SCHEDULING_TIMING.leaseRenewMs, () => this.renew());
    every(SCHEDULING_TIMING.cancelPollMs, () => this.pollCancels());
    this.kick();
  }

  /** A run was queued on this node: look now rather than at the next poll. */
  kick(): void {
    if (this.stopped) return;
    void this.claim().catch((err: unknown) => this.log.warn('scheduling claim failed', { error: message(err) }));
  }

  /** Stops claiming and abandons the attempts in flight (their transactions roll back). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    for (const r of this.running.values()) this.halt(r, 'shutdown');
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  /** One claiming round at a time; a kick during one makes another. */
  private async claim(): Promise<void> {
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    try {
      do {
        this.again = false;
        if (this.stopped) break;
        for (const claimed of await claimRuns(this.services().db, this.nodeId, this.capacity - this.running.size)) this.launch(claimed);
        while (!this.stopped && this.running.size < this.capacity) {
          const claimed = await claimSerialRun(this.services().db, this.nodeId);
          if (claimed === null || claimed === 'contended') break;
          this.launch(claimed);
        }
      } while (this.again && !this.stopped);
    } finally {
      this.claiming = false;
    }
  }

  private launch(claimed: ClaimedAttempt): void {
    const abort = new AbortController();
    const entry: Running = { abort, reason: null, done: Promise.resolve() };
    this.running.set(claimed.attemptId, entry);
    entry.done = runAttempt(this.services(), claimed, abort.signal, () => entry.reason, this.successes)
      .catch((err: unknown) => this.log.warn('scheduled attempt failed; its lease will run out', { attemptId: claimed.attemptId, runId: claimed.runId, error: message(err) }))
      .finally(() => {
        this.running.delete(claimed.attemptId);
        // A slot is free: a waiting run may start now.
        this.kick();
      });
  }

  private halt(r: Running, reason: StopReason): void {
    if (r.reason !== null) return;
    r.reason = reason;
    r.abort.abort();
  }

  private async renew(): Promise<void> {
    const ids = [...this.running.keys()];
    const alive = await renewLeases(this.services().db, ids);
    for (const id of ids) {
      const r = this.running.get(id);
      if (r !== undefined && !alive.has(id)) this.halt(r, 'lost');
    }
  }

  private async pollCancels(): Promise<void> {
    for (const id of await cancelRequested(this.services().db, [...this.running.keys()])) {
      const r = this.running.get(id);
      if (r !== undefined) this.halt(r, 'cancel');
    }
  }
}
