import type { Logger } from '../../runtime/log.js';
import { rollUpUsage, type RollupLimits, type RollupRun } from '../../runtime/usage/rollup.js';
import type { SqlClient } from '../../storage/index.js';
import { ActorId } from '../actor-id.js';
import { defineActor, type ActorDefinition } from '../define.js';
import type { ActorSystem } from '../system.js';
import type { ActorMessenger } from '../define.js';

/** The spec's rollup operator; one activation per cluster (key `main`), like the retention sweepers. */
export const ROLLUP_ACTOR = 'BillingDrainRollup';
export const rollupId = new ActorId(ROLLUP_ACTOR, 'main');

interface RollupDeps {
  db: SqlClient;
  log: Logger;
  limits: Omit<RollupLimits, 'stopped'>;
  intervalMs: number;
  stopping: { value: boolean };
}

interface RollupState {
  lastRunEndedAt: number;
  runs: number;
}

async function run(ctx: { state: RollupState; id: ActorId; system: ActorMessenger }, deps: RollupDeps): Promise<RollupRun & { runs: number }> {
  const result = await rollUpUsage(deps.db, { ...deps.limits, stopped: () => deps.stopping.value });
  ctx.state.lastRunEndedAt = Date.now();
  ctx.state.runs++;
  // Continue in a new message, not in this handler: each handler stays short and a shutdown stops cleanly.
  if (result.more && !deps.stopping.value) {
    setTimeout(() => {
      if (!deps.stopping.value) ctx.system.tell(ctx.id, 'more', {});
    }, deps.limits.pauseMs).unref();
  }
  return { ...result, runs: ctx.state.runs };
}

/**
 * BillingDrainRollup: adds written usage events into usage_rollups. Handlers
 * run one at a time and the cluster transport keeps one activation, so one
 * node aggregates at a time; its state is only a coalescing hint, the
 * progress itself (the high-water mark) is in the database
 * (runtime/usage/rollup.ts), so it can move to any node and restart anywhere.
 */
export const rollupActor: ActorDefinition<RollupState, RollupDeps> = defineActor<RollupState, RollupDeps>({
  kind: ROLLUP_ACTOR,
  activate: async () => ({ lastRunEndedAt: 0, runs: 0 }),
  handlers: {
    async tick(ctx, _msg: Record<string, never>, deps) {
      // Every node ticks once per interval: one run per interval is enough.
      if (Date.now() - ctx.state.lastRunEndedAt < deps.intervalMs / 2) return { skipped: true };
      return run(ctx, deps);
    },
    async more(ctx, _msg: Record<string, never>, deps) {
      return run(ctx, deps);
    },
    async rollup(ctx, _msg: Record<string, never>, deps) {
      return run(ctx, deps);
    },
  },
});

export interface UsageRollupDriverOptions {
  system: ActorSystem;
  db: SqlClient;
  log: Logger;
  intervalMs: number;
  batchRows: number;
  pauseMs: number;
  budgetMs?: number;
}

/** Registers the rollup operator and tells it on a timer from every node; the transport decides where it runs. */
export class UsageRollupDriver {
  private readonly stopping = { value: false };
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: UsageRollupDriverOptions) {
    const limits = { batchRows: opts.batchRows, pauseMs: opts.pauseMs, budgetMs: opts.budgetMs ?? 2_000 };
    opts.system.register(rollupActor, { db: opts.db, log: opts.log, limits, intervalMs: opts.intervalMs, stopping: this.stopping });
  }

  start(): void {
    if (this.timer !== null || this.stopping.value) return;
    this.timer = setInterval(() => this.opts.system.tell(rollupId, 'tick', {}), this.opts.intervalMs);
    this.timer.unref();
  }

  /** Runs the rollup now and returns what it did (tests, operators). */
  rollUpNow(timeoutMs = 60_000): Promise<RollupRun & { runs: number }> {
    return this.opts.system.ask(rollupId, 'rollup', {}, { timeoutMs });
  }

  stop(): void {
    this.stopping.value = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
