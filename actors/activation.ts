import { randomUUID } from 'node:crypto';
import { ServiceError } from '../runtime/errors/service-error.js';
import type { Logger } from '../runtime/log.js';
import type { ActorId } from './actor-id.js';
import type { ActorContext, ActorDefinition, ActorHandler, ActorMessenger } from './define.js';
import { ActorReason } from './errors.js';
import { Mailbox, type MailboxProcessor } from './mailbox.js';

// The runtime holds every kind in one table, so state and deps are erased here;
// defineActor() is where they are checked.
export type AnyHandler = ActorHandler<any, any>;

/** A registered kind, compiled once by register(). */
export interface KindEntry {
  readonly def: ActorDefinition<any, any>;
  readonly deps: unknown;
  readonly idleMs: number;
  readonly handlers: ReadonlyMap<string, AnyHandler>;
}

/** What an activation needs from its system, without reaching into the system's internals. */
export interface ActivationHost {
  readonly system: ActorMessenger;
  readonly log: Logger;
  readonly maxMessagesPerTurn: number;
  readonly counters: { processed: number; failed: number };
  /** The cell holds no activation and nothing is queued: forget it. */
  release(cell: Activation): void;
  /** The transport's fencing check (cluster lease), or null when every message may run. */
  readonly admit: ((id: ActorId) => ServiceError | null) | null;
}

/** One queued message. A class, so every letter has the same hidden shape. */
class Letter {
  constructor(
    readonly type: string,
    readonly handler: AnyHandler,
    readonly payload: unknown,
    readonly correlationId: string | undefined,
    readonly resolve: (value: unknown) => void,
    readonly reject: (err: unknown) => void,
  ) {}
}

const PASSIVATE = 1;
/** Drop state without deactivate(): another node may own the actor now. */
const EVICT = 2;
type SystemMessage = typeof PASSIVATE | typeof EVICT;

class Context<S> implements ActorContext<S> {
  constructor(
    readonly id: ActorId,
    public state: S,
    readonly log: Logger,
    readonly system: ActorMessenger,
  ) {}
}

/**
 * The local home of one actor id. It outlives a single activation: a crashed
 * handler or a passivation drops the state, and a message queued behind it
 * activates the actor again from durable state without ever running two
 * activations of one id side by side. The system forgets the cell only when
 * it holds no activation and no message.
 */
export class Activation implements MailboxProcessor<Letter, SystemMessage> {
  readonly id: ActorId;
  private readonly kind: KindEntry;
  private readonly host: ActivationHost;
  private readonly log: Logger;
  private readonly mailbox: Mailbox<Letter, SystemMessage>;
  private ctx: Context<unknown> | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private resolveStopped: (() => void) | null = null;
  private readonly onIdleTimerBound: () => void;

  constructor(id: ActorId, kind: KindEntry, host: ActivationHost) {
    this.id = id;
    this.kind = kind;
    this.host = host;
    this.log = host.log.child({ actor: id.str });
    this.mailbox = new Mailbox<Letter, SystemMessage>(this, host.maxMessagesPerTurn, (err) =>
      this.log.error('actor mailbox crashed', { error: String(err) }),
    );
    this.onIdleTimerBound = () => this.onIdleTimer();
  }

  /** Whether state is loaded (activate() succeeded and nothing discarded it since). */
  get active(): boolean {
    return this.ctx !== null;
  }

  enqueue(type: string, handler: AnyHandler, payload: unknown, correlationId: string | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.mailbox.postUser(new Letter(type, handler, payload, correlationId, resolve, reject));
    });
  }

  /** Lets queued messages finish, deactivates, and resolves once the system has forgotten this cell. */
  stop(): Promise<void> {
    if (this.stopped === null) {
      this.stopping = true;
      this.stopped = new Promise((resolve) => {
        this.resolveStopped = resolve;
      });
      if (this.mailbox.isIdle) this.idle();
    }
    return this.stopped;
  }

  /** This node lost the actor (cluster lease): drop the state after the running turn, without deactivate(). */
  evict(): void {
    this.mailbox.postSystem(EVICT);
  }

  async processUser(letter: Letter): Promise<void> {
    const admit = this.host.admit;
    if (admit !== null) {
      const refusal = admit(this.id);
      if (refusal !== null) {
        // Not provably the owner: the state may be stale and must not be written back.
        this.ctx = null;
        letter.reject(refusal);
        return;
      }
    }
    if (this.ctx === null && !(await this.activate(letter))) return;
    const ctx = this.ctx!;
    const counters = this.host.counters;
    try {
      const value = await letter.handler(ctx, letter.payload, this.kind.deps);
      counters.processed++;
      letter.resolve(value);
    } catch (err) {
      counters.processed++;
      if (ServiceError.is(err)) {
        letter.reject(err);
        return;
      }
      // A bug: the handler may have left state half-updated, so it is dropped
      // (deactivate is NOT called: it could persist the broken state).
      counters.failed++;
      this.ctx = null;
      letter.reject(this.masked(err, ActorReason.HandlerFailed, 'actor handler failed', letter));
    }
  }

  async processSystem(msg: SystemMessage): Promise<void> {
    if (this.ctx === null) return;
    if (msg === EVICT) {
      this.ctx = null;
      return;
    }
    // Work arrived after the idle timer fired: passivating now would only reload the same state.
    if (!this.stopping && this.mailbox.userCount > 0) return;
    const ctx = this.ctx;
    this.ctx = null;
    const deactivate = this.kind.def.deactivate;
    if (deactivate === undefined) return;
    try {
      await deactivate.call(this.kind.def, ctx, this.kind.deps);
    } catch (err) {
      this.log.error('actor deactivate failed', describe(err));
    }
  }

  idle(): void {
    if (this.ctx === null) {
      this.release();
    } else if (this.stopping) {
      this.mailbox.postSystem(PASSIVATE);
    } else if (this.idleTimer === null) {
      // unref: an idle actor must never keep the process alive.
      this.idleTimer = setTimeout(this.onIdleTimerBound, this.kind.idleMs).unref();
    } else {
      this.idleTimer.refresh();
    }
  }

  private onIdleTimer(): void {
    // A turn that is running re-arms the timer when it ends.
    if (this.mailbox.isIdle && this.ctx !== null) this.mailbox.postSystem(PASSIVATE);
  }

  /** Loads state; on failure every message waiting for this attempt gets the error, and the next message retries. */
  private async activate(first: Letter): Promise<boolean> {
    try {
      const state: unknown = await this.kind.def.activate(this.id, this.kind.deps);
      this.ctx = new Context(this.id, state, this.log, this.host.system);
      return true;
    } catch (err) {
      this.host.counters.failed++;
      const reply = ServiceError.is(err) ? err : this.masked(err, ActorReason.ActivationFailed, 'actor activation failed', first);
      first.reject(reply);
      this.mailbox.drainUser((letter) => letter.reject(reply));
      return false;
    }
  }

  /** Only declared errors reach a caller; a bug is logged with a reference and replied as INTERNAL. */
  private masked(err: unknown, reasonCode: string, what: string, letter: Letter): ServiceError {
    const ref = letter.correlationId ?? randomUUID();
    this.log.error(what, { type: letter.type, correlationId: ref, ...describe(err) });
    return new ServiceError('INTERNAL', reasonCode, `internal error (${ref})`);
  }

  private release(): void {
    if (this.idleTimer !== null) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    this.host.release(this);
    if (this.resolveStopped !== null) this.resolveStopped();
  }
}

function describe(err: unknown): Record<string, unknown> {
  return err instanceof Error ? { error: `${err.name}: ${err.message}`, stack: err.stack } : { error: String(err) };
}
