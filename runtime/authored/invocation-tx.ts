import { conflict } from '../errors/service-error.js';
import type { QueryResult, SqlClient, SqlExecutor } from '../../storage/index.js';

/** Thrown inside the host transaction to roll it back; never leaves this module. */
const ROLLBACK = Symbol('rollback');

/**
 * One CoreHandler invocation's host transaction (CONTRACT "Operations": every
 * `ctx.db` write of the invocation commits together when the handler returns,
 * none when it throws or hits a limit; its reads see its own writes).
 *
 * A SqlClient over the pool until `begin()` (the first write): reads before it
 * use the pool; from then on every statement runs in the one transaction, and
 * a nested `transaction()` (an executor's own) is a SAVEPOINT in it. The host
 * bridge runs each `ctx.db` call in `step()`, one at a time: a failed call is
 * rolled back to its savepoint and leaves the transaction usable, as a failed
 * request would leave the database.
 *
 * PGlite has one connection: while the transaction is open, a statement sent to
 * the pool itself would wait for it forever. So the nested dispatch of the
 * invocation gets this client as its `services.db`, and everything it sends
 * through that runs in the transaction.
 *
 * The transaction is not retried: SqlClient.transaction runs its function again
 * on a serialization failure, which here would run the handler's writes twice
 * (or commit none of them and answer success). A second run answers 409
 * CONFLICT `Handler.TransactionConflict` instead; the caller may retry.
 */
export class InvocationTx implements SqlClient {
  readonly backend: 'pglite' | 'postgres';
  readonly connections = 1;
  private tx: SqlExecutor | null = null;
  private opening: Promise<SqlExecutor> | null = null;
  private decide: ((commit: boolean) => void) | null = null;
  private settled: Promise<void> | null = null;
  private savepoints = 0;
  private queue: Promise<unknown> = Promise.resolve();

  /** `onOpen`: called once, when a write opens the transaction (spec.ts bounds how long it may stay open on PGlite). */
  constructor(private readonly pool: SqlClient, private readonly onOpen?: () => void) {
    this.backend = pool.backend;
  }

  /** Whether a write opened the transaction. */
  get open(): boolean {
    return this.opening !== null;
  }

  /** Opens the transaction (idempotent): answers its executor once BEGIN ran. */
  begin(): Promise<SqlExecutor> {
    if (this.opening !== null) return this.opening;
    this.onOpen?.();
    let runs = 0;
    this.opening = new Promise<SqlExecutor>((resolveTx, rejectTx) => {
      const decided = new Promise<boolean>((r) => (this.decide = r));
      this.settled = this.pool
        .transaction(async (tx) => {
          if (++runs > 1) throw conflict('Handler.TransactionConflict', 'the invocation\'s transaction conflicted with another one and was rolled back; retry the request');
          this.tx = tx;
          resolveTx(tx);
          if (!(await decided)) throw ROLLBACK;
        })
        .catch((err: unknown) => {
          rejectTx(err); // BEGIN itself failed: the first write answers it
          if (err !== ROLLBACK) throw err;
        });
      // Observed by commit()/rollback(); never an unhandled rejection meanwhile.
      this.settled.catch(() => {});
    });
    return this.opening;
  }

  /** Commits what the invocation wrote (nothing to do when it wrote nothing); a commit failure rejects. */
  async commit(): Promise<void> {
    if (this.opening === null) return;
    this.decide!(true);
    await this.settled;
  }

  /** Rolls back what the invocation wrote. */
  async rollback(): Promise<void> {
    if (this.opening === null) return;
    this.decide!(false);
    await this.settled!.catch(() => {});
  }

  /**
   * Runs one `ctx.db` call: after the others (statements on one transaction
   * cannot interleave their savepoints), and, once the transaction is open,
   * inside a savepoint released when `fn` succeeds and rolled back when it
   * fails (`failed` decides for an answer that is not a throw). A write opens
   * the transaction first, so even the first write is inside a savepoint.
   */
  step<T>(fn: () => Promise<T>, failed: (value: T) => boolean, write: boolean): Promise<T> {
    const run = async (): Promise<T> => {
      const tx = write ? await this.begin() : this.tx;
      return tx === null ? fn() : this.inSavepoint(tx, fn, failed);
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
  }

  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], preparedName?: string, signal?: AbortSignal): Promise<QueryResult<R>> {
    return this.tx === null ? this.pool.query<R>(sql, params, preparedName, signal) : this.tx.query<R>(sql, params, preparedName);
  }

  /** An executor's own transaction: a savepoint in the invocation's (which it opens: a transaction is for writing). */
  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const tx = await this.begin();
    return this.inSavepoint(tx, () => fn(tx), () => false);
  }

  exec(): Promise<void> {
    return Promise.reject(new Error('InvocationTx runs no scripts'));
  }

  /** The pool is the node's; the invocation only borrows it. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private async inSavepoint<T>(tx: SqlExecutor, fn: () => Promise<T>, failed: (value: T) => boolean): Promise<T> {
    const name = `plinth_sp${++this.savepoints}`;
    await tx.query(`SAVEPOINT ${name}`);
    let out: T;
    try {
      out = await fn();
    } catch (err) {
      await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw err;
    }
    await tx.query(failed(out) ? `ROLLBACK TO SAVEPOINT ${name}` : `RELEASE SAVEPOINT ${name}`);
    return out;
  }
}
