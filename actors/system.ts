import { ServiceError } from '../runtime/errors/service-error.js';
import type { Logger } from '../runtime/log.js';
import type { ActorEnvelope, ActorHost, ActorTransport } from './transport.js';
import { Activation, type ActivationHost, type AnyHandler, type KindEntry } from './activation.js';
import { ACTOR_KIND_PATTERN, ActorId } from './actor-id.js';
import type { ActorDefinition } from './define.js';
import { ActorReason, askTimeout, invalidConfig, systemStopped, unknownKind, unknownMessage } from './errors.js';

export interface ActorSystemOptions {
  /** This node's name in logs and errors (cluster: the lease owner). */
  nodeId: string;
  /** Default idle time before an activation is passivated; a kind may override it. */
  idleMs: number;
  /** Default ask deadline; past it the caller gets UNAVAILABLE `Actor.AskTimeout`. */
  askTimeoutMs: number;
  /** Messages one activation runs before yielding the event loop to others. */
  maxMessagesPerTurn: number;
  log: Logger;
  transport: ActorTransport;
}

/** Starting points for options; each is a trade-off, not a law. */
export const ACTOR_SYSTEM_DEFAULTS = {
  /** 5 min: re-loading control-plane state costs a SQL round trip; memory for an idle actor is small. */
  idleMs: 5 * 60_000,
  /** 10 s: long enough for a storage retry on 40001, short enough to surface a stuck actor. */
  askTimeoutMs: 10_000,
  /** 64: keeps one hot actor from holding the event loop while others wait. */
  maxMessagesPerTurn: 64,
} as const;

// setTimeout clamps larger delays to 1 ms, which would turn a long timeout into none.
const MAX_TIMER_MS = 2 ** 31 - 1;

import type { AskOptions } from './define.js';

export type { AskOptions } from './define.js';

export interface ActorSystemStats {
  /** Activations holding loaded state. */
  activations: number;
  /** Activations per registered kind (0 for a kind with none). */
  byKind: Record<string, number>;
  /** Handler runs that finished, with a reply or an error. */
  processed: number;
  /** Supervision events: handler crashes (non-ServiceError) and failed activations. */
  failed: number;
}

/**
 * Virtual actors on this node: activation on first message, single-writer
 * turns, passivation when idle, and supervision. Where an actor lives is the
 * transport's business; ask/tell always go through it, even to a local actor.
 */
export class ActorSystem implements ActorHost {
  readonly nodeId: string;
  private readonly log: Logger;
  private readonly transport: ActorTransport;
  private readonly idleMs: number;
  private readonly askTimeoutMs: number;
  private readonly kinds = new Map<string, KindEntry>();
  private readonly cells = new Map<string, Activation>();
  private readonly counters = { processed: 0, failed: 0 };
  private readonly host: ActivationHost;
  private stopped = false;
  private stopping: Promise<void> | null = null;

  constructor(opts: ActorSystemOptions) {
    checkOptions(opts);
    this.nodeId = opts.nodeId;
    this.log = opts.log.child({ node: opts.nodeId });
    this.transport = opts.transport;
    this.idleMs = opts.idleMs;
    this.askTimeoutMs = opts.askTimeoutMs;
    const cells = this.cells;
    const transport = opts.transport;
    this.host = {
      system: this,
      log: this.log,
      maxMessagesPerTurn: opts.maxMessagesPerTurn,
      counters: this.counters,
      release(cell) {
        if (cells.get(cell.id.str) !== cell) return;
        cells.delete(cell.id.str);
        transport.activationEnded?.(cell.id);
      },
      admit: typeof transport.admit === 'function' ? transport.admit.bind(transport) : null,
    };
    opts.transport.bind(this);
  }

  register<S, D>(def: ActorDefinition<S, D>, deps: D): void {
    if (typeof def.kind !== 'string' || !ACTOR_KIND_PATTERN.test(def.kind)) {
      throw invalidConfig(ActorReason.InvalidDefinition, `invalid actor kind ${JSON.stringify(def.kind)}`);
    }
    if (this.kinds.has(def.kind)) {
      throw invalidConfig(ActorReason.InvalidDefinition, `actor kind ${def.kind} is already registered`);
    }
    if (typeof def.activate !== 'function') {
      throw invalidConfig(ActorReason.InvalidDefinition, `actor kind ${def.kind} has no activate()`);
    }
    const handlers = new Map<string, AnyHandler>();
    for (const [type, handler] of Object.entries(def.handlers)) {
      if (typeof handler !== 'function') {
        throw invalidConfig(ActorReason.InvalidDefinition, `handler ${def.kind}.${type} is not a function`);
      }
      handlers.set(type, handler as AnyHandler);
    }
    const idleMs = def.idleMs ?? this.idleMs;
    if (!isTimerMs(idleMs)) throw invalidConfig(ActorReason.InvalidDefinition, `idleMs of ${def.kind} must be 1..${MAX_TIMER_MS}`);
    this.kinds.set(def.kind, { def, deps, idleMs, handlers });
  }

  ask<R = unknown>(id: ActorId, type: string, payload: unknown, opts?: AskOptions): Promise<R> {
    if (this.stopped) return Promise.reject(systemStopped(this.nodeId));
    const refusal = this.refuse(id.kind, type);
    if (refusal !== null) return Promise.reject(refusal);
    const timeoutMs = opts?.timeoutMs ?? this.askTimeoutMs;
    const envelope: ActorEnvelope = { target: id, type, payload, correlationId: opts?.correlationId };
    return new Promise<R>((resolve, reject) => {
      let settled = false;
      // Not unref'd: a caller is waiting on this reply, so the process should too.
      const timer = setTimeout(() => {
        settled = true;
        reject(askTimeout(id.str, type, timeoutMs));
      }, timeoutMs);
      this.transport.request(envelope, timeoutMs).then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value as R);
        },
        (err: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  tell(id: ActorId, type: string, payload: unknown): void {
    if (this.stopped) {
      this.log.warn('actor tell dropped', { actor: id.str, type, reasonCode: ActorReason.SystemStopped });
      return;
    }
    const refusal = this.refuse(id.kind, type);
    const envelope: ActorEnvelope = { target: id, type, payload, correlationId: undefined };
    const sent = refusal === null ? this.transport.request(envelope, this.askTimeoutMs) : Promise.reject(refusal);
    sent.then(undefined, (err: unknown) => this.tellFailed(id, type, err));
  }

  /** Called by transports to run a message on a local activation. */
  deliverLocal(msg: ActorEnvelope): Promise<unknown> {
    if (this.stopped) return Promise.reject(systemStopped(this.nodeId));
    const target = msg.target;
    const kind = this.kinds.get(target.kind);
    if (kind === undefined) return Promise.reject(unknownKind(target.kind));
    const handler = kind.handlers.get(msg.type);
    if (handler === undefined) return Promise.reject(unknownMessage(target.kind, msg.type));
    let id: ActorId;
    if (target instanceof ActorId) {
      id = target;
    } else {
      try {
        id = new ActorId(target.kind, target.key);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    let cell = this.cells.get(id.str);
    if (cell === undefined) {
      cell = new Activation(id, kind, this.host);
      this.cells.set(id.str, cell);
    }
    return cell.enqueue(msg.type, handler, msg.payload, msg.correlationId);
  }

  /**
   * Called by transports: drop the local activation of `id` without
   * deactivate() because this node no longer owns it (cluster lease lost).
   */
  evict(id: ActorId): void {
    const cell = this.cells.get(id.str);
    if (cell === undefined) return;
    this.log.warn('actor evicted', { actor: id.str });
    cell.evict();
  }

  stats(): ActorSystemStats {
    const byKind: Record<string, number> = {};
    for (const kind of this.kinds.keys()) byKind[kind] = 0;
    let activations = 0;
    for (const cell of this.cells.values()) {
      if (!cell.active) continue;
      activations++;
      byKind[cell.id.kind] = (byKind[cell.id.kind] ?? 0) + 1;
    }
    return { activations, byKind, processed: this.counters.processed, failed: this.counters.failed };
  }

  /**
   * Deactivate everything (graceful drain), then stop timers. New messages are
   * refused at once (retryable, so in cluster mode they move to another node);
   * messages already queued still run.
   */
  stop(): Promise<void> {
    if (this.stopping === null) {
      this.stopped = true;
      this.stopping = this.drain();
    }
    return this.stopping;
  }

  private async drain(): Promise<void> {
    await Promise.all(Array.from(this.cells.values(), (cell) => cell.stop()));
    await this.transport.close();
    this.log.info('actor system stopped', { processed: this.counters.processed, failed: this.counters.failed });
  }

  /**
   * Checked where a message is sent, not only where it runs: an unknown kind
   * or message fails without a network hop, and a cluster node never claims
   * an actor for a message it would refuse.
   */
  private refuse(kind: string, type: string): ServiceError | null {
    const entry = this.kinds.get(kind);
    if (entry === undefined) return unknownKind(kind);
    return entry.handlers.has(type) ? null : unknownMessage(kind, type);
  }

  private tellFailed(id: ActorId, type: string, err: unknown): void {
    if (ServiceError.is(err)) {
      this.log.warn('actor tell failed', { actor: id.str, type, code: err.code, reasonCode: err.reasonCode, message: err.message });
    } else {
      this.log.error('actor tell failed', { actor: id.str, type, error: String(err) });
    }
  }
}

function isTimerMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_TIMER_MS;
}

function checkOptions(opts: ActorSystemOptions): void {
  const bad = (what: string): never => {
    throw invalidConfig(ActorReason.InvalidOptions, `actor system option ${what}`);
  };
  if (typeof opts.nodeId !== 'string' || opts.nodeId === '') bad('nodeId must be a non-empty string');
  if (!isTimerMs(opts.idleMs)) bad(`idleMs must be an integer 1..${MAX_TIMER_MS}`);
  if (!isTimerMs(opts.askTimeoutMs)) bad(`askTimeoutMs must be an integer 1..${MAX_TIMER_MS}`);
  if (!Number.isInteger(opts.maxMessagesPerTurn) || opts.maxMessagesPerTurn < 1) bad('maxMessagesPerTurn must be a positive integer');
  if (opts.log === undefined || typeof opts.log.child !== 'function') bad('log must be a Logger');
  if (opts.transport === undefined || typeof opts.transport.request !== 'function') bad('transport must be an ActorTransport');
}
