import type { RealtimeRecipient } from '../../runtime/realtime/hub.js';

/** What a connection needs of a uWS WebSocket (a small surface, so the policy is unit-testable). */
export interface WsLike {
  send(message: string, isBinary?: boolean): number;
  getBufferedAmount(): number;
  end(code?: number, reason?: string): void;
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
}

/** Close code for a client that reads too slowly: 1013 "try again later". */
export const SLOW_CONSUMER_CLOSE_CODE = 1013;
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Connections on this process (diagnostics and tests). */
export const wsStats = { open: 0, droppedSlow: 0 };

/**
 * One realtime WebSocket connection: its subscriptions and its send path.
 * Change messages reach it through uWS topics (`join`); replies through
 * `send`. Backpressure: once uWS holds more than `maxBufferedBytes` unsent
 * for this client — seen on a direct send or by the periodic sweep over
 * published traffic (`checkBackpressure`) — the connection is closed with
 * 1013, never buffered without bound.
 */
export class RealtimeConnection implements RealtimeRecipient {
  open = true;
  readonly subscriptions = new Map<string, () => void>();
  /** Subscribe ids whose dispatch is in flight (a duplicate id is refused meanwhile too). */
  readonly pending = new Set<string>();
  private nextId = 1;

  constructor(private readonly ws: WsLike, private readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES) {}

  newId(): string {
    return `s${this.nextId++}`;
  }

  send(message: string): void {
    if (!this.open) return;
    if (this.ws.getBufferedAmount() > this.maxBufferedBytes) return this.dropSlow();
    this.ws.send(message, false);
    if (this.ws.getBufferedAmount() > this.maxBufferedBytes) this.dropSlow();
  }

  join(topic: string): void {
    if (this.open) this.ws.subscribe(topic);
  }

  leave(topic: string): void {
    // A closed socket has already left every topic (and may no longer be touched).
    if (this.open) this.ws.unsubscribe(topic);
  }

  /** Closes the connection with 1013 when too much is unsent; true when it did. */
  checkBackpressure(): boolean {
    if (!this.open || this.ws.getBufferedAmount() <= this.maxBufferedBytes) return false;
    this.dropSlow();
    return true;
  }

  /**
   * Ends the connection from our side: sends `finalMessage` (when given),
   * detaches every subscription at once (no further change reaches it), then
   * closes with `code` (session revoked: 4401).
   */
  endWith(code: number, reason: string, finalMessage?: string): void {
    if (!this.open) return;
    if (finalMessage !== undefined) this.send(finalMessage);
    if (!this.open) return;
    this.closeSubscriptions();
    this.open = false;
    try {
      this.ws.end(code, reason);
    } catch {
      /* already closed */
    }
  }

  private dropSlow(): void {
    wsStats.droppedSlow++;
    this.closeSubscriptions();
    this.open = false;
    try {
      this.ws.end(SLOW_CONSUMER_CLOSE_CODE, 'slow consumer: too many unsent messages');
    } catch {
      /* already closed */
    }
  }

  /** Detaches every subscription (releases their quota slots). */
  closeSubscriptions(): void {
    for (const detach of this.subscriptions.values()) detach();
    this.subscriptions.clear();
  }

  /** The socket closed (client, idle timeout, shutdown or our own end()). */
  closed(): void {
    this.open = false;
    this.closeSubscriptions();
  }
}
