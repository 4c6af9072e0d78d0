import type { KV, KvEntry } from '@nats-io/kv';
import type { Logger } from '../runtime/log.js';
import { retryJetStream } from './js-retry.js';
import { kvToken, openBucket } from './kv-bucket.js';
import type { ClusterConnection } from './nats-connection.js';

export const MEMBERS_BUCKET = 'plinth_members';

/** Longest a membership listing may take before the last known list is served instead. */
const LIST_TIMEOUT_MS = 2_000;

async function listEntries(kv: KV): Promise<Array<KvEntry | null>> {
  const keys: string[] = [];
  for await (const k of await kv.keys()) keys.push(k);
  return Promise.all(keys.map((k) => kv.get(k)));
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`membership listing took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

export const MEMBERSHIP_DEFAULTS = {
  /** 10 s: a node that stops heartbeating (crash, partition) drops out of the list after at most this long. */
  ttlMs: 10_000,
  /** 2 s: five heartbeats per TTL, so a couple lost to a JetStream leader election do not drop a live node. */
  heartbeatMs: 2_000,
} as const;

export interface MemberLoad {
  activations: number;
  inFlight: number;
  rssBytes: number;
}

/** One live node, as it last reported itself (same shape as runtime/services.ts NodeMember). */
export interface Member {
  nodeId: string;
  /** ISO time the node started. */
  startedAt: string;
  /** ISO time of its last heartbeat. */
  updatedAt: string;
  url: string | null;
  load: MemberLoad;
}

export interface MembershipOptions {
  log: Logger;
  ttlMs?: number;
  heartbeatMs?: number;
  bucket?: string;
}

/**
 * Which nodes are alive and how loaded they are: each node puts its entry in
 * the `plinth_members` KV bucket every heartbeat; the bucket's max age (TTL)
 * removes a node that stopped. Advisory only (health, fabric view): placement
 * never depends on it, the leases do.
 */
export class Membership {
  readonly nodeId: string;
  readonly startedAt = new Date().toISOString();
  private readonly log: Logger;
  private readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private readonly bucket: string;
  private readonly key: string;
  private kv: KV | null = null;
  private timer: NodeJS.Timeout | null = null;
  private load: () => MemberLoad = () => ({ activations: 0, inFlight: 0, rssBytes: 0 });
  private url: () => string | null = () => null;
  private beating: Promise<void> | null = null;
  private last: Member[] = [];
  private failing = false;
  private stopped = false;

  constructor(
    private readonly conn: ClusterConnection,
    opts: MembershipOptions,
  ) {
    this.nodeId = conn.nodeId;
    this.log = opts.log.child({ component: 'membership' });
    this.ttlMs = opts.ttlMs ?? MEMBERSHIP_DEFAULTS.ttlMs;
    this.heartbeatMs = opts.heartbeatMs ?? MEMBERSHIP_DEFAULTS.heartbeatMs;
    this.bucket = opts.bucket ?? MEMBERS_BUCKET;
    this.key = kvToken(conn.nodeId);
    if (!Number.isInteger(this.heartbeatMs) || this.heartbeatMs < 10 || !Number.isInteger(this.ttlMs) || this.ttlMs < this.heartbeatMs * 2) {
      throw new RangeError('membership: heartbeatMs must be an integer >= 10 and ttlMs at least twice heartbeatMs');
    }
  }

  /**
   * Opens the bucket, publishes the first heartbeat (so this node is listed
   * when this resolves), then beats on a timer. JetStream outages are retried
   * for up to `deadlineMs` (default 30 s); calling it again after a failure is safe.
   */
  async start(load: () => MemberLoad, url?: () => string | null, deadlineMs = 30_000): Promise<void> {
    this.load = load;
    if (url !== undefined) this.url = url;
    const until = Date.now() + deadlineMs;
    const { kv } = await openBucket(this.conn, { name: this.bucket, ttlMs: this.ttlMs, history: 1 }, deadlineMs);
    this.kv = kv;
    await retryJetStream(() => kv.put(this.key, this.entry()), { deadlineMs: Math.max(0, until - Date.now()) });
    if (this.stopped || this.timer !== null) return;
    this.timer = setInterval(() => this.beat(), this.heartbeatMs).unref();
  }

  /**
   * Live members, this one included, sorted by node id. While the bucket is
   * unreachable (a JetStream leader election) it answers from the last list
   * it read, minus entries older than the TTL.
   */
  async members(): Promise<Member[]> {
    const kv = this.kv;
    if (kv === null) return [];
    try {
      // kv.keys() runs an ordered consumer that can wait forever when an entry expires mid-listing
      // (nats-server 2.9): health and fabric must not hang on it, so a listing gets a deadline.
      const entries = await withDeadline(listEntries(kv), LIST_TIMEOUT_MS);
      const cutoff = Date.now() - this.ttlMs;
      const out: Member[] = [];
      for (const e of entries) {
        // The server drops expired entries on its own schedule; the time check hides one that is due.
        if (e === null || e.operation !== 'PUT' || e.created.getTime() < cutoff) continue;
        const m = parseMember(e.string());
        if (m !== null) out.push(m);
      }
      this.last = out.sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
    } catch (err) {
      this.log.warn('membership list unavailable; answering from the last one', { error: String(err) });
      const cutoff = Date.now() - this.ttlMs;
      this.last = this.last.filter((m) => Date.parse(m.updatedAt) >= cutoff);
    }
    return this.last;
  }

  /** Stops heartbeating and removes this node's entry (graceful leave). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.beating !== null) await this.beating;
    const kv = this.kv;
    if (kv === null || this.conn.nc.isClosed()) return;
    try {
      await retryJetStream(() => kv.delete(this.key), { deadlineMs: this.heartbeatMs });
    } catch (err) {
      this.log.warn('membership entry not removed; it expires by TTL', { error: String(err) });
    }
  }

  private beat(): void {
    const kv = this.kv;
    if (kv === null || this.beating !== null || this.conn.nc.isClosed()) return;
    this.beating = kv
      .put(this.key, this.entry())
      .then(
        () => {
          if (this.failing) this.log.info('membership heartbeat recovered');
          this.failing = false;
        },
        (err: unknown) => {
          if (!this.failing) this.log.warn('membership heartbeat failed', { error: String(err) });
          this.failing = true;
        },
      )
      .finally(() => {
        this.beating = null;
      });
  }

  private entry(): string {
    const member: Member = { nodeId: this.nodeId, startedAt: this.startedAt, updatedAt: new Date().toISOString(), url: this.url(), load: this.load() };
    return JSON.stringify(member);
  }
}

function parseMember(text: string): Member | null {
  try {
    const v = JSON.parse(text) as Partial<Member>;
    if (typeof v.nodeId !== 'string' || typeof v.startedAt !== 'string' || typeof v.updatedAt !== 'string' || typeof v.load !== 'object' || v.load === null) return null;
    return { nodeId: v.nodeId, startedAt: v.startedAt, updatedAt: v.updatedAt, url: typeof v.url === 'string' ? v.url : null, load: v.load };
  } catch {
    return null;
  }
}
