import type { RealtimeConnection } from './connection.js';

/** How often published traffic is checked against each connection's bound. */
export const SWEEP_INTERVAL_MS = 100;

/**
 * Change messages are published through uWS topics, which copy them to every
 * member natively without asking JS: so the 1013 bound on unsent bytes is
 * checked by a sweep over the open connections (≈0.1 µs each) instead of
 * after every message. Between sweeps a client falls behind by at most what
 * is published in one interval; uWS's own `maxBackpressure` (set well above
 * the bound) caps even that.
 */
export class SlowConsumerSweep {
  private readonly connections = new Set<RealtimeConnection>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly intervalMs = SWEEP_INTERVAL_MS) {}

  add(conn: RealtimeConnection): void {
    this.connections.add(conn);
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(), this.intervalMs);
      this.timer.unref();
    }
  }

  delete(conn: RealtimeConnection): void {
    this.connections.delete(conn);
    if (this.connections.size === 0) this.stop();
  }

  /** Closes (1013) every connection past its bound; returns how many. */
  sweep(): number {
    let dropped = 0;
    for (const c of this.connections) if (c.checkBackpressure()) dropped++;
    return dropped;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
