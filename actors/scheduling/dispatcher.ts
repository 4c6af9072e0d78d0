import type { Logger } from '../../runtime/log.js';
import { reapLostAttempts } from '../../runtime/scheduling/reap.js';
import { SCHEDULING_TIMING } from '../../runtime/scheduling/types.js';
import type { SqlClient } from '../../storage/index.js';
import { ActorId } from '../actor-id.js';
import { defineActor, type ActorDefinition } from '../define.js';
import type { ActorSystem } from '../system.js';

export const DISPATCHER_KIND = 'ScheduledJobDispatcher';
export const dispatcherId = new ActorId(DISPATCHER_KIND, 'main');

export interface DispatcherDeps {
  db: SqlClient;
  log: Logger;
  /** Moves the events of runs it ended to the event log. */
  kickOutbox: () => void;
}

/** Messages the dispatcher takes. */
export interface DispatcherMessages {
  /** A node's timer (every node sends it); also what tests send to reap now. Replies with what it did. */
  tick: Record<string, never>;
}

/**
 * ScheduledJobDispatcher: a singleton operator actor (one activation per
 * cluster, key `main`, like the retention sweepers) that finds attempts whose
 * lease ran out, marks them `lost` and queues their runs again
 * (runtime/scheduling/reap.ts). Stateless: it can move to any node; N nodes
 * ticking it only make it look more often, and every step is conditioned on
 * state in the database.
 */
export const dispatcherActor: ActorDefinition<Record<string, never>, DispatcherDeps> = defineActor<Record<string, never>, DispatcherDeps>({
  kind: DISPATCHER_KIND,
  activate: async () => ({}),
  handlers: {
    async tick(_ctx, _msg: DispatcherMessages['tick'], deps) {
      const out = await reapLostAttempts(deps.db);
      if (out.lost > 0) deps.log.info('scheduling: lost attempts requeued', { lost: out.lost });
      if (out.ended) deps.kickOutbox();
      return out;
    },
  },
});

/** Registers the dispatcher on this node and ticks it every `reapIntervalMs` (every node does; the transport keeps one activation). */
export class DispatcherDriver {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly system: ActorSystem, deps: DispatcherDeps, private readonly log: Logger) {
    system.register(dispatcherActor, deps);
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      this.system.ask(dispatcherId, 'tick', {}).catch((err: unknown) => this.log.warn('scheduling dispatcher tick failed', { error: err instanceof Error ? err.message : String(err) }));
    }, SCHEDULING_TIMING.reapIntervalMs);
    this.timer.unref();
  }

  /** Reaps now and answers what it did (tests, operators). */
  reapNow(): Promise<{ lost: number; ended: boolean }> {
    return this.system.ask(dispatcherId, 'tick', {});
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
