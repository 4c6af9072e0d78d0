import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import type { Logger } from '../log.js';
import type { OutboxKicker } from '../services.js';

const S = PLATFORM_SCHEMA;
const BATCH = 500;
/** Sweep for rows nobody kicked for (a crash between commit and kick, another node's rows). */
const SWEEP_EVERY_MS = 500;

/**
 * Moves committed outbox rows into the event log with the spec's envelope.
 * One statement per batch deletes from the outbox and inserts into the log,
 * so a row is moved exactly once; `ON CONFLICT (id) DO NOTHING` makes a
 * replayed batch harmless. Embedded mode's event log is this SQL table; the
 * cluster issue swaps in a JetStream stream behind the same drain loop.
 */
export class OutboxProcessor implements OutboxKicker {
  private scheduled = false;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  moved = 0;

  constructor(private readonly db: SqlClient, private readonly log: Logger) {}

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

  /** Drains until the outbox is empty; concurrent calls share one run. */
  drain(): Promise<void> {
    if (this.running !== null) return this.running;
    this.running = (async () => {
      try {
        while ((await this.moveBatch()) === BATCH) {
          /* keep going */
        }
      } catch (err) {
        this.log.warn('outbox drain failed; will retry', { error: err instanceof Error ? err.message : String(err) });
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async moveBatch(): Promise<number> {
    const res = await this.db.query(
      `WITH moved AS (
         DELETE FROM ${S}.outbox WHERE seq IN (SELECT seq FROM ${S}.outbox ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
         RETURNING seq, event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version, occurred_at)
       INSERT INTO ${S}.events (id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at, data)
       SELECT event_id, type, tenant_id, project_id, entity, correlation_id, publication_version, occurred_at,
              jsonb_build_object('entity', entity, 'entityId', entity_id, 'changedFields', changed_fields, 'branch', branch)
       FROM moved ORDER BY seq
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
    );
    this.moved += res.rowCount;
    return res.rowCount;
  }

  /** Stops the sweep and moves whatever is left. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.drain();
    await this.drain();
  }
}
