import type { Logger } from '../../runtime/log.js';
import { routeEventTriggers } from '../../runtime/scheduling/event-router.js';
import { scanTimeTriggers } from '../../runtime/scheduling/scan.js';
import { SCHEDULING_TIMING } from '../../runtime/scheduling/types.js';
import { meterQueuedRuns } from '../../runtime/scheduling/run-usage.js';
import type { UsageSink } from '../../runtime/usage/sink.js';
import type { PublicationSource } from '../../runtime/services.js';
import type { SqlClient } from '../../storage/index.js';
import { ActorId } from '../actor-id.js';
import { defineActor, type ActorContext, type ActorDefinition } from '../define.js';
import type { ActorSystem } from '../system.js';

/** The spec's operator actor that fires triggers; one activation per cluster (key `main`). */
export const SCANNER_ID = new ActorId('ScheduledJobScanner', 'main');
const MIN_WAKE_MS = 20;

export interface ScannerDeps {
  db: SqlClient;
  nodeId: string;
  publications: PublicationSource;
  log: Logger;
  /** Where each queued run's `task.runs` usage goes (runtime/scheduling/run-usage.ts); absent: not metered. */
  usage?: UsageSink;
  /** After runs were queued: the local worker looks at once (services.scheduling.kick, wired elsewhere). */
  kick?: () => void;
  /** Set at shutdown: no more scans, no more wake-ups. */
  stopping: { value: boolean };
}

interface ScannerState {
  /** This activation's clock at the end of its last scan: ticks from N nodes coalesce into one scan. */
  lastScanEndedAt: number;
  /** The wake-up set for the nearest fire time sooner than the next tick. */
  wake: NodeJS.Timeout | null;
}

/** What one scan did (the `scan` message's reply). */
export interface ScanReport { timeRuns: number; eventRuns: number }

/** Due triggers fired, then new events routed; a failure (the database away) is logged and the next tick tries again. */
async function scan(ctx: ActorContext<ScannerState>, deps: ScannerDeps): Promise<ScanReport> {
  if (deps.stopping.value) return { timeRuns: 0, eventRuns: 0 };
  let time: Awaited<ReturnType<typeof scanTimeTriggers>> = { queued: [], nextDueAt: null };
  let eventRuns = 0;
  try {
    time = await scanTimeTriggers(deps.db, deps.nodeId);
    meterQueuedRuns(deps.usage, time.queued);
    for (let more = true; more && !deps.stopping.value;) {
      const r = await routeEventTriggers(deps);
      eventRuns += r.queued;
      more = r.more;
    }
  } catch (err) {
    deps.log.warn('scheduler scan failed; the next tick tries again', { error: err instanceof Error ? err.message : String(err) });
  }
  ctx.state.lastScanEndedAt = Date.now();
  if (time.queued.length + eventRuns > 0) deps.kick?.();
  // Sleep until the nearest fire, bounded by the tick period: a fire starts within 1 s of its time.
  if (ctx.state.wake !== null) clearTimeout(ctx.state.wake);
  ctx.state.wake = null;
  if (time.nextDueAt !== null) {
    // At least a few ms: a trigger another scanner holds locked stays due, and must not make this one spin.
    const ms = Math.max(MIN_WAKE_MS, time.nextDueAt.getTime() - Date.now());
    if (ms < SCHEDULING_TIMING.scanMaxSleepMs) {
      ctx.state.wake = setTimeout(() => {
        if (!deps.stopping.value) ctx.system.tell(ctx.id, 'wake', {});
      }, ms);
      ctx.state.wake.unref();
    }
  }
  return { timeRuns: time.queued.length, eventRuns };
}

/**
 * ScheduledJobScanner: fires due time triggers and routes entity events to event
 * triggers (runtime/scheduling/scan.ts, event-router.ts). A singleton operator
 * actor like the retention sweepers: the transport keeps one activation per
 * cluster, its handlers run one at a time, and every node's timer tells it
 * `tick`. Exactly-once does not rest on that: the unique keys of migration 29 do.
 */
export const scannerActor: ActorDefinition<ScannerState, ScannerDeps> = defineActor<ScannerState, ScannerDeps>({
  kind: SCANNER_ID.kind,
  activate: async () => ({ lastScanEndedAt: 0, wake: null }),
  deactivate: async (ctx) => {
    if (ctx.state.wake !== null) clearTimeout(ctx.state.wake);
  },
  handlers: {
    /** A node's timer; N nodes tick once per period each, one scan per half period is enough. */
    async tick(ctx, _msg: Record<string, never>, deps) {
      if (Date.now() - ctx.state.lastScanEndedAt < SCHEDULING_TIMING.scanMaxSleepMs / 2) return { skipped: true };
      return scan(ctx, deps);
    },
    /** Its own wake-up at the nearest fire time. */
    async wake(ctx, _msg: Record<string, never>, deps) {
      return scan(ctx, deps);
    },
    /** Scan now and reply with what was queued (tests, operators). */
    async scan(ctx, _msg: Record<string, never>, deps) {
      return scan(ctx, deps);
    },
  },
});

/** Registers the scanner on this node's actor system and tells it `tick` on a timer, on every node. */
export class SchedulerDriver {
  private readonly stopping = { value: false };
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly system: ActorSystem, deps: Omit<ScannerDeps, 'stopping'>) {
    system.register(scannerActor, { ...deps, stopping: this.stopping });
  }

  start(): void {
    if (this.timer !== null || this.stopping.value) return;
    this.timer = setInterval(() => this.system.tell(SCANNER_ID, 'tick', {}), SCHEDULING_TIMING.scanMaxSleepMs);
    this.timer.unref();
    this.system.tell(SCANNER_ID, 'tick', {});
  }

  /** One scan now (tests). */
  scanNow(timeoutMs = 30_000): Promise<ScanReport> {
    return this.system.ask<ScanReport>(SCANNER_ID, 'scan', {}, { timeoutMs });
  }

  /** Stops the timer and further scans (call before the actor system stops). */
  stop(): void {
    this.stopping.value = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
