import type { Logger } from '../../runtime/log.js';
import type { OutboxKicker } from '../../runtime/services.js';
import { ActorId } from '../actor-id.js';
import { defineActor } from '../define.js';
import type { ActorSystem } from '../system.js';

export const OUTBOX_KIND = 'outbox';
/** One outbox for the cluster: a single activation drains it, so batches reach the log in outbox order. */
export const OUTBOX_ID = new ActorId(OUTBOX_KIND, 'main');

/** What the actor runs (OutboxProcessor has this shape). */
export interface OutboxActorDeps {
  processor: { drain(): Promise<number> };
}

/** Messages the outbox actor takes. `at` is the sender's clock when the write that prompted it had committed. */
export interface OutboxMessages {
  /** Drain now and reply with the rows moved (graceful shutdown, tests). */
  drain: Record<string, never>;
  /** A write committed on some node. */
  kick: { at: number };
  /** A node's sweep timer (rows nobody kicked for: a crash between commit and kick). */
  tick: { at: number };
}

interface OutboxState {
  /** Start of the last finished drain: a kick sent before it is already covered. */
  lastDrainStartedAt: number;
}

/**
 * Kicks older than the last drain's start are skipped, less this margin for
 * clock skew between nodes (a skipped kick that was needed is still caught
 * by the next sweep, 500 ms later).
 */
const SKEW_MARGIN_MS = 25;

async function runDrain(state: OutboxState, deps: OutboxActorDeps): Promise<{ moved: number }> {
  state.lastDrainStartedAt = Date.now();
  return { moved: await deps.processor.drain() };
}

function covered(state: OutboxState, msg: unknown): boolean {
  const at = (msg as { at?: unknown } | null)?.at;
  return typeof at === 'number' && at + SKEW_MARGIN_MS < state.lastDrainStartedAt;
}

/**
 * The cluster's outbox processor as a singleton actor: handlers run one at a
 * time and the transport keeps at most one activation in the cluster, so
 * exactly one node drains at a time. Its state is only a coalescing hint;
 * the rows themselves stay in SQL, so it can move to any node.
 */
export const outboxActor = defineActor<OutboxState, OutboxActorDeps>({
  kind: OUTBOX_KIND,
  activate: async () => ({ lastDrainStartedAt: 0 }),
  handlers: {
    async drain(ctx, _msg: OutboxMessages['drain'], deps) {
      return runDrain(ctx.state, deps);
    },
    async kick(ctx, msg: OutboxMessages['kick'], deps) {
      if (covered(ctx.state, msg)) return { moved: 0, skipped: true };
      return runDrain(ctx.state, deps);
    },
    async tick(ctx, msg: OutboxMessages['tick'], deps) {
      if (covered(ctx.state, msg)) return { moved: 0, skipped: true };
      return runDrain(ctx.state, deps);
    },
  },
});

export interface OutboxDriverOptions {
  system: ActorSystem;
  log: Logger;
  /** Sweep tell per node. Default 500 ms. */
  sweepMs?: number;
  /** At most one kick tell per this interval per node. Default 10 ms. */
  coalesceMs?: number;
  /** Bound on the final drain at stop(). Default 30 s. */
  stopTimeoutMs?: number;
}

/**
 * One per node in cluster mode: the node's OutboxKicker. After each
 * committed write it tells the outbox actor (coalesced), and it sweeps on a
 * timer, wherever in the cluster the actor lives.
 */
export class OutboxDriver implements OutboxKicker {
  private readonly system: ActorSystem;
  private readonly log: Logger;
  private readonly sweepMs: number;
  private readonly coalesceMs: number;
  private readonly stopTimeoutMs: number;
  private sweep: NodeJS.Timeout | null = null;
  private trailing: NodeJS.Timeout | null = null;
  private lastTell = 0;
  private stopped = false;
  /** Tells sent (kicks and ticks), for diagnostics. */
  readonly stats = { kicks: 0, ticks: 0 };

  constructor(opts: OutboxDriverOptions) {
    this.system = opts.system;
    this.log = opts.log;
    this.sweepMs = opts.sweepMs ?? 500;
    this.coalesceMs = opts.coalesceMs ?? 10;
    this.stopTimeoutMs = opts.stopTimeoutMs ?? 30_000;
  }

  start(): void {
    if (this.sweep !== null || this.stopped) return;
    this.sweep = setInterval(() => this.tell('tick'), this.sweepMs);
    this.sweep.unref();
    this.tell('tick');
  }

  /** Leading edge at once, then at most one more per coalesce interval. */
  kick(): void {
    if (this.stopped || this.trailing !== null) return;
    const wait = this.lastTell + this.coalesceMs - Date.now();
    if (wait <= 0) return this.tell('kick');
    this.trailing = setTimeout(() => {
      this.trailing = null;
      this.tell('kick');
    }, wait);
  }

  private tell(type: 'kick' | 'tick'): void {
    if (this.stopped) return;
    this.lastTell = Date.now();
    if (type === 'kick') this.stats.kicks++;
    else this.stats.ticks++;
    this.system.tell(OUTBOX_ID, type, { at: this.lastTell });
  }

  /** Stops the timers, then asks for a final drain (call before the actor system stops). */
  async stop(): Promise<number> {
    if (this.stopped) return 0;
    this.stopped = true;
    if (this.sweep !== null) clearInterval(this.sweep);
    if (this.trailing !== null) clearTimeout(this.trailing);
    this.sweep = this.trailing = null;
    try {
      const r = await this.system.ask<{ moved: number }>(OUTBOX_ID, 'drain', {}, { timeoutMs: this.stopTimeoutMs });
      return r.moved;
    } catch (err) {
      this.log.warn('final outbox drain failed; rows stay for the next node', { error: err instanceof Error ? err.message : String(err) });
      return 0;
    }
  }
}
