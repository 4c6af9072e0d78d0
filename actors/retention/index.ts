import type { Logger } from '../../runtime/log.js';
import type { RetentionRule, SweeperName } from '../../runtime/retention/rules.js';
import { sweepRules, type RuleSweep, type SweepLimits } from '../../runtime/retention/sweep.js';
import type { SqlExecutor } from '../../storage/index.js';
import { ActorId } from '../actor-id.js';
import { defineActor, type ActorDefinition } from '../define.js';
import type { ActorSystem } from '../system.js';
import type { ActorMessenger } from '../define.js';
import { expireSandboxes } from './sandbox-expiry.js';

/** The spec's operator actors; one activation of each per cluster (key `main`). */
export const SWEEPER_NAMES: SweeperName[] = ['ObservabilityDrainAudit', 'StagingTtlSweeper', 'BillingDrainMetering'];
export const sweeperId = (name: SweeperName): ActorId => new ActorId(name, 'main');

/** How often expired sandboxes are looked for: CONTRACT deletes one within 15 s after `expiresAt`. */
const SANDBOX_SWEEP_MS = 5_000;

export interface SweeperDeps {
  db: SqlExecutor;
  log: Logger;
  /** This sweeper's rules (retentionRules() filtered by sweeper name). */
  rules: RetentionRule[];
  limits: Omit<SweepLimits, 'stopped'>;
  /** Node timer period: a tick arriving sooner than half of it after the last sweep is skipped. */
  intervalMs: number;
  /** Set at shutdown: a sweep in progress stops between batches. */
  stopping: { value: boolean };
}

/** Messages a sweeper takes. */
export interface SweeperMessages {
  /** A node's timer. Every node sends it; most are skipped (see `recent`). */
  tick: Record<string, never>;
  /** Sent to itself when the time budget ran out with rows still due. */
  more: Record<string, never>;
  /** Sweep now, whatever the last sweep was, and reply with what was deleted (tests, operators). */
  sweep: Record<string, never>;
  /** StagingTtlSweeper: delete sandboxes past `expiresAt` (a timer of its own, so it meets CONTRACT's 15 s). */
  expireSandboxes: Record<string, never>;
}

interface SweeperState {
  /** This activation's clock at the end of its last sweep (state and clock are the same node's: no skew). */
  lastSweepEndedAt: number;
  sweeps: number;
}

async function run(ctx: { state: SweeperState; id: ActorId; system: ActorMessenger }, deps: SweeperDeps): Promise<{ results: RuleSweep[]; sweeps: number }> {
  const results = await sweepRules(deps.db, deps.rules, { ...deps.limits, stopped: () => deps.stopping.value });
  ctx.state.lastSweepEndedAt = Date.now();
  ctx.state.sweeps++;
  const deleted = results.reduce((n, r) => n + r.deleted, 0);
  if (deleted > 0) deps.log.info('retention sweep', { sweeper: ctx.id.kind, results: results.filter((r) => r.deleted > 0) });
  // Continue in a new message rather than in this handler: each run stays short (a remote
  // tell's reply is not held for minutes), and a shutdown between runs stops it cleanly.
  if (results.some((r) => r.more) && !deps.stopping.value) {
    setTimeout(() => {
      if (!deps.stopping.value) ctx.system.tell(ctx.id, 'more', {});
    }, deps.limits.pauseMs).unref();
  }
  return { results, sweeps: ctx.state.sweeps };
}

/**
 * A retention sweeper as a singleton operator actor, modelled on the outbox
 * actor: handlers run one at a time and the cluster transport keeps at most
 * one activation, so exactly one node deletes a given table's rows. Its
 * state is only a coalescing hint; it can move to any node.
 */
export function sweeperActor(name: SweeperName): ActorDefinition<SweeperState, SweeperDeps> {
  return defineActor<SweeperState, SweeperDeps>({
    kind: name,
    activate: async () => ({ lastSweepEndedAt: 0, sweeps: 0 }),
    handlers: {
      async tick(ctx, _msg: SweeperMessages['tick'], deps) {
        // N nodes each tick once per interval: one sweep per interval is enough.
        if (Date.now() - ctx.state.lastSweepEndedAt < deps.intervalMs / 2) return { skipped: true };
        return run(ctx, deps);
      },
      async more(ctx, _msg: SweeperMessages['more'], deps) {
        return run(ctx, deps);
      },
      async sweep(ctx, _msg: SweeperMessages['sweep'], deps) {
        return run(ctx, deps);
      },
      async expireSandboxes(ctx, _msg: SweeperMessages['expireSandboxes'], deps) {
        if (name !== 'StagingTtlSweeper' || deps.stopping.value) return { deleted: 0 };
        return { deleted: await expireSandboxes(deps.db, ctx.system, deps.log) };
      },
    },
  });
}

export interface RetentionDriverOptions {
  system: ActorSystem;
  db: SqlExecutor;
  log: Logger;
  rules: RetentionRule[];
  intervalMs: number;
  batchRows: number;
  pauseMs: number;
  /** Longest run of batches in one handler. Default 2 s (under the cluster's 5 s request timeout). */
  budgetMs?: number;
}

/**
 * Registers the sweepers on this node's actor system and, on every node,
 * tells them on a timer. Where they run is the transport's business: in
 * cluster mode the lease holder of `ObservabilityDrainAudit/main` sweeps audit,
 * whichever node's timer fired.
 */
export class RetentionDriver {
  readonly system: ActorSystem;
  private readonly intervalMs: number;
  private readonly stopping = { value: false };
  private timer: NodeJS.Timeout | null = null;
  private sandboxTimer: NodeJS.Timeout | null = null;

  constructor(opts: RetentionDriverOptions) {
    this.system = opts.system;
    this.intervalMs = opts.intervalMs;
    const limits = { batchRows: opts.batchRows, pauseMs: opts.pauseMs, budgetMs: opts.budgetMs ?? 2_000 };
    for (const name of SWEEPER_NAMES) {
      const rules = opts.rules.filter((r) => r.sweeper === name);
      opts.system.register(sweeperActor(name), { db: opts.db, log: opts.log, rules, limits, intervalMs: opts.intervalMs, stopping: this.stopping });
    }
  }

  /** First sweep one interval after start: boot is busy enough. */
  start(): void {
    if (this.timer !== null || this.stopping.value) return;
    this.timer = setInterval(() => {
      for (const name of SWEEPER_NAMES) this.system.tell(sweeperId(name), 'tick', {});
    }, this.intervalMs);
    this.timer.unref();
    this.sandboxTimer = setInterval(() => {
      this.system.tell(sweeperId('StagingTtlSweeper'), 'expireSandboxes', {});
    }, Math.min(SANDBOX_SWEEP_MS, this.intervalMs));
    this.sandboxTimer.unref();
  }

  /** Runs both sweepers now and returns what each deleted. */
  async sweepNow(timeoutMs = 60_000): Promise<Record<SweeperName, RuleSweep[]>> {
    const out = {} as Record<SweeperName, RuleSweep[]>;
    for (const name of SWEEPER_NAMES) {
      out[name] = (await this.system.ask<{ results: RuleSweep[] }>(sweeperId(name), 'sweep', {}, { timeoutMs })).results;
    }
    return out;
  }

  /** Stops the timer and any sweep in progress at its next batch (call before the actor system stops). */
  stop(): void {
    this.stopping.value = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.sandboxTimer !== null) clearInterval(this.sandboxTimer);
    this.timer = null;
    this.sandboxTimer = null;
  }
}
