import type { PeerUsage } from '../runtime/realtime/hub.js';
import type { ClusterBus } from './cluster-bus.js';

const TOPIC = 'realtime.usage';

export interface ClusterRealtimeUsageOptions {
  /** Full snapshot period (also the liveness signal). Default 2 s. */
  heartbeatMs?: number;
  /** A peer silent this long is dead and its subscriptions no longer count. Default 3 heartbeats. */
  expireMs?: number;
  /** Changes are batched this long before being announced. Default 50 ms. */
  debounceMs?: number;
}

interface PeerCounts {
  counts: Map<string, number>;
  seenAt: number;
}

/**
 * The realtime subscription quota across a cluster: each node announces its
 * per-project counts on the bus (changes within 50 ms, a full snapshot every
 * 2 s), and each node sums the last counts of its live peers with its own.
 * It is eventually consistent: subscribes racing on different nodes within
 * one announcement may together pass the limit by what they add in that
 * window; a dead node's subscriptions stop counting after `expireMs`.
 */
export class ClusterRealtimeUsage implements PeerUsage {
  private readonly local = new Map<string, number>();
  private readonly dirty = new Set<string>();
  private readonly peers = new Map<string, PeerCounts>();
  private readonly heartbeatMs: number;
  private readonly expireMs: number;
  private readonly debounceMs: number;
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly bus: ClusterBus, private readonly nodeId: string, opts: ClusterRealtimeUsageOptions = {}) {
    this.heartbeatMs = opts.heartbeatMs ?? 2_000;
    this.expireMs = opts.expireMs ?? this.heartbeatMs * 3;
    this.debounceMs = opts.debounceMs ?? 50;
    bus.subscribe(TOPIC, (p) => this.received(p));
    this.heartbeat = setInterval(() => this.announce(true), this.heartbeatMs);
    this.heartbeat.unref();
    this.announce(true);
  }

  othersOf(projectId: string): number {
    const now = Date.now();
    let sum = 0;
    for (const [node, p] of this.peers) {
      if (now - p.seenAt > this.expireMs) this.peers.delete(node);
      else sum += p.counts.get(projectId) ?? 0;
    }
    return sum;
  }

  changed(projectId: string, count: number): void {
    if (count === 0) this.local.delete(projectId);
    else this.local.set(projectId, count);
    this.dirty.add(projectId);
    if (this.flushTimer === null) {
      this.flushTimer = setTimeout(() => this.announce(false), this.debounceMs);
      this.flushTimer.unref();
    }
  }

  close(): void {
    clearInterval(this.heartbeat);
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    // Tell the peers at once that this node's subscriptions are gone.
    this.bus.publish(TOPIC, { node: this.nodeId, full: true, counts: {} });
  }

  /** A full snapshot replaces a peer's counts; a delta updates the named projects (0 removes). */
  private announce(full: boolean): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const counts: Record<string, number> = {};
    if (full) for (const [p, n] of this.local) counts[p] = n;
    else for (const p of this.dirty) counts[p] = this.local.get(p) ?? 0;
    this.dirty.clear();
    this.bus.publish(TOPIC, { node: this.nodeId, full, counts });
  }

  private received(payload: Record<string, unknown>): void {
    const { node, full, counts } = payload as { node?: unknown; full?: unknown; counts?: unknown };
    if (typeof node !== 'string' || typeof counts !== 'object' || counts === null) return;
    let peer = this.peers.get(node);
    if (peer === undefined || full === true) {
      peer = { counts: new Map(), seenAt: 0 };
      this.peers.set(node, peer);
    }
    peer.seenAt = Date.now();
    for (const [p, n] of Object.entries(counts as Record<string, unknown>)) {
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) peer.counts.delete(p);
      else peer.counts.set(p, n);
    }
  }
}
