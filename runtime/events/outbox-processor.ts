import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf, type SqlClient } from '../../storage/index.js';
import type { Logger } from '../log.js';
import type { OutboxKicker } from '../services.js';
import { NO_EVENT_SINK, type EventSink } from './event-sink.js';
import type { EventEnvelope } from './event-store.js';

const S = PLATFORM_SCHEMA;
/** Rows per batch: one SQL transaction and one pipelined publish of this many events. */
const BATCH = 500;
/** Sweep for rows nobody kicked for (a crash between commit and kick, another node's rows). */
const SWEEP_EVERY_MS = 500;

const MOVED_COLUMNS = 'seq, event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version, occurred_at';
/** Inserts CTE `moved` (retired outbox rows) into the queryable projection, in seq order, once per event id. */
const PROJECT_MOVED = `INSERT INTO ${S}.events (id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at, data)
  SELECT event_id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at,
         jsonb_build_object('entity', entity, 'entityId', entity_id, 'changedFields', changed_fields, 'branch', branch)
  FROM moved ORDER BY seq
  ON CONFLICT (id) DO NOTHING`;
/** PROJECT_MOVED for rows that cannot already be in the log (embedded move, see moveInSql). */
const PROJECT_MOVED_NEW = PROJECT_MOVED.slice(0, PROJECT_MOVED.indexOf('\n  ON CONFLICT'));

export interface OutboxProcessorOptions {
  /** Where batches are published before the rows are retired. Default: none (embedded: the SQL table is the log). */
  sink?: EventSink;
  /** Rows per batch. Default 500. */
  batchSize?: number;
}

export interface OutboxStats {
  /** Outbox rows retired into the log. */
  moved: number;
  /** Batches committed. */
  batches: number;
  /** Batches rolled back (publish or SQL failure); their rows stay for the next drain. */
  failures: number;
}

interface OutboxRow {
  seq: string;
  event_id: string;
  type: string;
  tenant_id: string;
  project_id: string;
  branch: string;
  entity: string | null;
  entity_id: string | null;
  changed_fields: unknown;
  correlation_id: string;
  publication_version: string;
  occurred_at: string;
}

/** The envelope the log and the projection both carry (the projection builds the same `data` in SQL below). */
const toEnvelope = (r: OutboxRow): EventEnvelope => ({
  id: r.event_id,
  type: r.type,
  occurredAt: r.occurred_at,
  tenantId: r.tenant_id,
  projectId: r.project_id,
  publicationVersion: Number(r.publication_version),
  correlationId: r.correlation_id,
  data: { entity: r.entity, entityId: r.entity_id, changedFields: r.changed_fields, branch: r.branch },
});

/**
 * Moves committed outbox rows into the event log with the spec's envelope.
 * A batch is one SQL transaction: lock the oldest rows (SKIP LOCKED), publish
 * them to the sink and wait for its acks, insert them into the queryable
 * projection `events` (ON CONFLICT DO NOTHING), delete them from the outbox,
 * commit. A failed publish or commit rolls back and the rows are published
 * again by a later drain: at-least-once, made effectively once by the log's
 * dedupe on the event id. The projection is only written after the log
 * acknowledged, so it never shows an event the log lacks.
 *
 * Embedded mode runs it with start() (its own sweep) and no sink; cluster
 * mode runs drain() inside the outbox singleton actor (actors/outbox).
 */
export class OutboxProcessor implements OutboxKicker {
  private scheduled = false;
  private running: Promise<number> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly sink: EventSink;
  private readonly batchSize: number;
  private readonly listeners = new Set<() => void>();
  readonly stats: OutboxStats = { moved: 0, batches: 0, failures: 0 };

  constructor(private readonly db: SqlClient, private readonly log: Logger, opts: OutboxProcessorOptions = {}) {
    this.sink = opts.sink ?? NO_EVENT_SINK;
    this.batchSize = opts.batchSize ?? BATCH;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1 || this.batchSize > 10_000) throw new Error('outbox batchSize must be 1..10000');
  }

  /** Rows moved so far (kept for callers of the earlier API). */
  get moved(): number {
    return this.stats.moved;
  }

  /** Embedded mode: drain on every kick and on a sweep timer. */
  start(): void {
    this.timer = setInterval(() => this.kick(), SWEEP_EVERY_MS);
    this.timer.unref();
    this.kick();
  }

  kick(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  /** Called after each committed batch (tails wake up instead of waiting for their next poll). */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Drains until the outbox is empty; concurrent calls share one run.
   * Resolves with the rows moved by that run; never rejects (a failure is
   * logged and the rows wait for the next drain).
   */
  drain(): Promise<number> {
    if (this.running !== null) return this.running;
    this.running = (async () => {
      let moved = 0;
      try {
        for (;;) {
          const n = await this.moveBatch();
          moved += n;
          if (n < this.batchSize) break;
        }
      } catch (err) {
        this.stats.failures++;
        this.log.warn('outbox drain failed; will retry', { error: err instanceof Error ? err.message : String(err) });
      } finally {
        this.running = null;
      }
      return moved;
    })();
    return this.running;
  }

  private async moveBatch(): Promise<number> {
    const n = this.sink === NO_EVENT_SINK ? await this.moveInSql() : await this.publishAndMove();
    if (n > 0) {
      this.stats.moved += n;
      this.stats.batches++;
      for (const l of this.listeners) {
        try {
          l();
        } catch (err) {
          this.log.warn('outbox listener failed', { error: String(err) });
        }
      }
    }
    return n;
  }

  /**
   * Embedded mode: the SQL table is the log, so nothing leaves the database: one
   * statement deletes and projects the oldest rows (one round trip and no row data
   * through Node, instead of a four-statement transaction). It is kept lean because
   * it runs once per few creates (W3):
   * - no `FOR UPDATE SKIP LOCKED`: the DELETE locks the rows itself, and a
   *   concurrent mover (another process on the same database) blocks on them, then
   *   finds them gone and returns nothing, so a row is still moved exactly once.
   *   The explicit lock wrote one more WAL record per row.
   * - no `ON CONFLICT`: every event id is a fresh random UUID and this statement
   *   is the only way into the log, so a clash cannot come from a second move;
   *   speculative insertion wrote one more WAL record per row. Should a clash
   *   ever happen (23505), the batch is retried with `ON CONFLICT DO NOTHING`
   *   instead of failing forever.
   * - a prepared statement: planned once per connection.
   */
  private async moveInSql(): Promise<number> {
    try {
      return await this.moveInSqlWith(PROJECT_MOVED_NEW, 'plinth_outbox_move');
    } catch (err) {
      if (sqlstateOf(err) !== SQLSTATE.UNIQUE_VIOLATION) throw err;
      this.log.warn('outbox move met an event id already in the log; moving the batch with ON CONFLICT DO NOTHING');
      return this.moveInSqlWith(PROJECT_MOVED, 'plinth_outbox_move_dedupe');
    }
  }

  private async moveInSqlWith(project: string, name: string): Promise<number> {
    const res = await this.db.query<{ n: number }>(
      `WITH moved AS (DELETE FROM ${S}.outbox WHERE seq IN (SELECT seq FROM ${S}.outbox ORDER BY seq LIMIT ${this.batchSize}) RETURNING ${MOVED_COLUMNS}),
       projected AS (${project} RETURNING 1)
       SELECT (SELECT count(*) FROM moved)::int AS n`,
      [], `${name}_${this.batchSize}`,
    );
    return res.rows[0]?.n ?? 0;
  }

  /** Cluster mode: lock a batch, publish it and wait for the log's acks, then retire and project it, in one transaction. */
  private publishAndMove(): Promise<number> {
    return this.db.transaction(async (tx) => {
      const rows = (await tx.query<OutboxRow>(
        `SELECT ${MOVED_COLUMNS} FROM ${S}.outbox ORDER BY seq LIMIT ${this.batchSize} FOR UPDATE SKIP LOCKED`,
      )).rows;
      if (rows.length === 0) return 0;
      await this.sink.publish(rows.map(toEnvelope));
      await tx.query(
        `WITH moved AS (DELETE FROM ${S}.outbox WHERE seq = ANY($1::bigint[]) RETURNING ${MOVED_COLUMNS}) ${PROJECT_MOVED}`,
        [rows.map((r) => r.seq)],
      );
      return rows.length;
    });
  }

  /** Stops the sweep and moves whatever is left. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.drain();
    await this.drain();
  }
}
