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

  /**
   * Publishes a notice and waits until `peers` other nodes handled it (each
   * subscriber answers a notice that asks for a reply), or `timeoutMs`
   * passed. Resolves to how many confirmed; never rejects, since a peer that
   * does not answer still falls back to its cache TTL.
   */
  async publishConfirmed(topic: string, payload: Record<string, unknown>, peers: number, timeoutMs: number): Promise<number> {
    if (peers <= 0) return 0;
    let confirmed = 0;
    try {
      const replies = await this.nc.requestMany(`${PREFIX}.${topic}`, pack({ from: this.nodeId, payload }), { strategy: 'count', maxMessages: peers, maxWait: timeoutMs });
      for await (const _ of replies) confirmed++;
    } catch {
      // No responders, timeout or a closed connection: the peers' TTLs bound the staleness.
    }
    return confirmed;
  }

  subscribe(topic: string, handler: Handler): void {
    const sub = this.nc.subscribe(`${PREFIX}.${topic}`, {
      callback: (err, msg) => {
        if (err !== null) return;
        try {
          const { from, payload } = unpack(msg.data) as { from: string; payload: Record<string, unknown> };
          if (from === this.nodeId) return;
          handler(payload);
          // Confirms after acting, for publishConfirmed; plain notices ask for no reply.
          if (msg.reply !== undefined && msg.reply !== '') msg.respond();
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
