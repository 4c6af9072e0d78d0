import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { pack, unpack } from 'msgpackr';
import type { CacheTrust } from '../runtime/cache/cache-trust.js';

/** How often a node sends itself an echo through the NATS server. */
export const ECHO_INTERVAL_MS = 250;
/**
 * How old the newest echo may be before the node stops trusting caches that
 * bus notices keep fresh. Shorter than the confirmation deadline of a grant
 * change (CONFIRM_MS, 2 s): a node that did not confirm in time has stopped
 * trusting its caches by the time the changing node answers (docs/adr/0009).
 */
export const CONTACT_STALE_MS = 1_000;

/**
 * Whether this node is in contact with the bus, as a fence for the caches
 * that bus notices invalidate (grants, API keys).
 *
 * The node publishes its clock time to its own subject every
 * ECHO_INTERVAL_MS. NATS delivers a connection's messages in the order the
 * server routed them, so an echo sent at time t arrives after every notice
 * the server had routed to this node before t: once that echo has been
 * handled, so have those notices. `trusted()` holds while the newest echo
 * was sent less than CONTACT_STALE_MS ago. After a gap (a partition, a
 * reconnect that lost notices, an event loop stalled), `epoch` moves on, so
 * entries loaded before the gap are loaded again. Reading it is two number
 * comparisons: no round trip on the hot path.
 */
export class BusContact implements CacheTrust {
  epoch = 0;
  private lastEchoSentAt: number;
  private readonly subject: string;
  private sub: Subscription | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly nc: NatsConnection, nodeId: string, private readonly now: () => number = Date.now) {
    this.subject = `plinth.contact.${nodeId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    // Just connected: nothing was cached before, nothing can have been missed.
    this.lastEchoSentAt = now();
  }

  start(): void {
    if (this.sub !== null) return;
    this.sub = this.nc.subscribe(this.subject, {
      callback: (err, msg) => {
        if (err !== null) return;
        try {
          const sentAt = unpack(msg.data) as number;
          if (typeof sentAt !== 'number') return;
          if (this.now() - this.lastEchoSentAt > CONTACT_STALE_MS) this.epoch++;
          if (sentAt > this.lastEchoSentAt) this.lastEchoSentAt = sentAt;
        } catch {
          // Not an echo of ours.
        }
      },
    });
    this.timer = setInterval(() => this.echo(), ECHO_INTERVAL_MS).unref();
  }

  trusted(): boolean {
    const stale = this.now() - this.lastEchoSentAt > CONTACT_STALE_MS;
    // A gap seen by a reader also invalidates what was cached before it, even if no echo arrived since.
    if (stale) this.epoch++;
    return !stale;
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.sub?.unsubscribe();
    this.sub = null;
  }

  private echo(): void {
    try {
      this.nc.publish(this.subject, pack(this.now()));
    } catch {
      // Closed or draining: the echoes stop, and so does the trust.
    }
  }
}
