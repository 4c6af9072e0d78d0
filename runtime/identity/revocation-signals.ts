type Listener = (id: string) => void;

/**
 * Who hears of a revoked credential (a session or an API key): `onRevoked`
 * listeners of those revoked on this node only (they announce it to the
 * cluster), `onEnded` listeners of every one, local or announced (the realtime
 * layer closes the credential's connections). A throwing listener never stops
 * the revocation or the other listeners.
 */
export class RevocationSignals {
  private readonly revokedHere = new Set<Listener>();
  private readonly ended = new Set<Listener>();

  /** `local: false` for a revocation learned from another node. */
  emit(id: string, local: boolean): void {
    if (local) for (const l of this.revokedHere) call(l, id);
    for (const l of this.ended) call(l, id);
  }

  /** Returns an unsubscribe. */
  onRevoked(listener: Listener): () => void {
    this.revokedHere.add(listener);
    return () => this.revokedHere.delete(listener);
  }

  /** Returns an unsubscribe. */
  onEnded(listener: Listener): () => void {
    this.ended.add(listener);
    return () => this.ended.delete(listener);
  }
}

function call(l: Listener, id: string): void {
  try {
    l(id);
  } catch {
    // a listener must not break revocation
  }
}
