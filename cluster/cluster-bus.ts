import { createInbox, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import { pack, unpack } from 'msgpackr';
import { BusContact } from './bus-contact.js';

const PREFIX = 'plinth.bus';
/** How long a confirmed notice waits for the missing confirmations before it is sent again. */
const RESEND_MS = 200;
/** Notice ids remembered to handle a resent notice once; past it the memory starts over (a repeat only invalidates again). */
const MAX_SEEN = 10_000;

type Handler = (payload: Record<string, unknown>) => void;

/**
 * Notices between nodes (cache invalidations, revocations). Core NATS, not
 * JetStream: `publish` is fire-and-forget (a notice lost during a reconnect
 * is covered by the short TTL of the cache it invalidates); `publishConfirmed`
 * waits for every live peer's confirmation, and `contact` tells the caches
 * whether this node may have missed one (docs/adr/0009). A node ignores its
 * own notices (it already acted on them locally).
 */
export class ClusterBus {
  private readonly subs: Subscription[] = [];
  private readonly seen = new Set<string>();
  /** This node's contact with the bus: the fence of the grant and API key caches. */
  readonly contact: BusContact;

  constructor(private readonly nc: NatsConnection, private readonly nodeId: string) {
    this.contact = new BusContact(nc, nodeId);
    this.contact.start();
  }

  publish(topic: string, payload: Record<string, unknown>): void {
    try {
      this.nc.publish(`${PREFIX}.${topic}`, pack({ from: this.nodeId, payload }));
    } catch {
      // Closed or draining connection: peers fall back to their cache TTLs.
    }
  }

  /**
   * Publishes a notice and waits until every node of `peers` (live members
   * other than this one) confirmed it handled it, or `timeoutMs` passed.
   * Core NATS delivers at most once, so the notice is sent again every
   * RESEND_MS while some peer has not confirmed; receivers handle a notice
   * id once and confirm every copy. Resolves to the peers that did not
   * confirm in time; never rejects (the caller decides what a silent peer
   * means, docs/adr/0009).
   */
  async publishConfirmed(topic: string, payload: Record<string, unknown>, peers: readonly string[] | Promise<readonly string[]>, timeoutMs: number): Promise<string[]> {
    // The notice goes out while the member list is still being read: the change waits for the slower of the two, not both.
    const confirmed = new Set<string>();
    let waiting = null as Set<string> | null;
    let wake: () => void = () => {};
    const done = new Promise<void>((resolve) => { wake = resolve; });
    const settle = (): void => { if (waiting !== null && waiting.size === 0) wake(); };
    void Promise.resolve(peers).then(
      (list) => { waiting = new Set(list.filter((p) => p !== this.nodeId && !confirmed.has(p))); settle(); },
      () => { waiting = new Set(); settle(); },
    );
    const inbox = createInbox();
    let sub: Subscription | null = null;
    const until = Date.now() + timeoutMs;
    try {
      sub = this.nc.subscribe(inbox, {
        callback: (err, msg) => {
          if (err !== null) return;
          try {
            const from = String(unpack(msg.data));
            confirmed.add(from);
            waiting?.delete(from);
          } catch {
            // An empty or foreign reply confirms nobody.
          }
          settle();
        },
      });
      const data = pack({ from: this.nodeId, id: randomUUID(), payload });
      while (waiting === null || waiting.size > 0) {
        const left = until - Date.now();
        if (left <= 0) break;
        this.nc.publish(`${PREFIX}.${topic}`, data, { reply: inbox });
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([done, new Promise<void>((r) => { timer = setTimeout(r, Math.min(RESEND_MS, left)); })]);
        clearTimeout(timer);
      }
    } catch {
      // Closed or draining connection: whoever has not confirmed is reported.
    } finally {
      sub?.unsubscribe();
    }
    return [...(waiting ?? [])];
  }

  subscribe(topic: string, handler: Handler): void {
    const sub = this.nc.subscribe(`${PREFIX}.${topic}`, {
      callback: (err, msg) => {
        if (err !== null) return;
        try {
          const { from, id, payload } = unpack(msg.data) as { from: string; id?: string; payload: Record<string, unknown> };
          if (from === this.nodeId) return;
          if (id === undefined || this.firstSight(id)) handler(payload);
          // Confirms (with its node id) after acting, for publishConfirmed; plain notices ask for no reply.
          if (msg.reply !== undefined && msg.reply !== '') msg.respond(pack(this.nodeId));
        } catch {
          // A malformed notice is dropped; it can only have come from a broken peer.
        }
      },
    });
    this.subs.push(sub);
  }

  /** True the first time a resent notice's id is seen on this node. */
  private firstSight(id: string): boolean {
    if (this.seen.has(id)) return false;
    if (this.seen.size >= MAX_SEEN) this.seen.clear();
    this.seen.add(id);
    return true;
  }

  close(): void {
    this.contact.close();
    for (const s of this.subs) s.unsubscribe();
    this.subs.length = 0;
  }
}
