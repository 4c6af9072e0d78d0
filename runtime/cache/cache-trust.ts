/**
 * Whether a node may serve from caches that cluster notices keep fresh
 * (grants, API keys). In cluster mode it is the node's contact with the bus
 * (cluster/bus-contact.ts, docs/adr/0009); on a single node always true.
 */
export interface CacheTrust {
  /** False while the node may have missed a notice: read through to the database, cache nothing. */
  trusted(): boolean;
  /** Moves on after every gap in contact: entries cached under an older epoch are loaded again. */
  readonly epoch: number;
}

export const ALWAYS_TRUSTED: CacheTrust = { trusted: () => true, epoch: 0 };
