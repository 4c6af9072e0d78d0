import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { pack, unpack } from 'msgpackr';

const PREFIX = 'plinth.bus';

type Handler = (payload: Record<string, unknown>) => void;

/**
 * Fire-and-forget notices between nodes (cache invalidations, revocations).
 * Core NATS, not JetStream: a notice lost during a reconnect is covered by
 * the short TTLs of the caches it invalidates, so it needs no durability.
 * A node ignores its own notices (it already acted on them locally).
 */
export class ClusterBus {
  private readonly subs: Subscription[] = [];

  constructor(private readonly nc: NatsConnection, private readonly nodeId: string) {}

  publish(topic: string, payload: Record<string, unknown>): void {
    try {
      this.nc.publish(`${PREFIX}.${topic}`, pack({ from: this.nodeId, payload }));
    } catch {
      // Closed or draining connection: peers fall back to their cache TTLs.
    }
  }

  subscribe(topic: string, handler: Handler): void {
    const sub = this.nc.subscribe(`${PREFIX}.${topic}`, {
      callback: (err, msg) => {
        if (err !== null) return;
        try {
          const { from, payload } = unpack(msg.data) as { from: string; payload: Record<string, unknown> };
          if (from !== this.nodeId) handler(payload);
        } catch {
          // A malformed notice is dropped; it can only have come from a broken peer.
        }
      },
    });
    this.subs.push(sub);
  }

  close(): void {
    for (const s of this.subs) s.unsubscribe();
    this.subs.length = 0;
  }
}
