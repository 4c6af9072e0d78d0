import type { Subscription } from '@nats-io/transport-node';
import type { ActorId } from '../actors/index.js';
import type { Lease } from './leases.js';

export const CLAIMING = 0;
export const OWNED = 1;
export const RELEASING = 2;

/** This node's hold on one actor: claiming its lease, owning it (lease + subscription), or handing it back. */
export class Placement {
  state = CLAIMING;
  lease: Lease | null = null;
  sub: Subscription | null = null;
  /** A message went to the local system through this placement (so its activation's end is this lease's end). */
  delivered = false;
  /** Resolves when a CLAIMING or RELEASING placement settles; waiters then look again. */
  settled: Promise<void>;
  private resolveSettled: () => void = () => {};

  constructor(readonly id: ActorId) {
    this.settled = this.nextSettled();
  }

  nextSettled(): Promise<void> {
    this.settled = new Promise((resolve) => {
      this.resolveSettled = resolve;
    });
    return this.settled;
  }

  settle(): void {
    this.resolveSettled();
  }
}

/** Drops the placement's subscription, if any; a closed connection already dropped it. */
export function unsubscribe(p: Placement): void {
  const sub = p.sub;
  p.sub = null;
  if (sub === null) return;
  try {
    sub.unsubscribe();
  } catch {
    // connection already closed: the subscription is gone with it
  }
}

