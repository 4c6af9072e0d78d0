import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import { RUN_EVENT_TYPES } from './types.js';

const S = PLATFORM_SCHEMA;

/** The most successes one statement ends; more wait for the next. */
const MAX_PER_FLUSH = 256;
/**
 * How long the first success waits for others before a flush: fewer, larger
 * statements (and fewer outbox moves, one per flush) for 2 ms more per run's
 * end; a run's start is not delayed.
 */
const FLUSH_DELAY_MS = 2;

/** A successful attempt whose handler wrote nothing: all its success has to write is its own states and event. */
export interface PlainSuccess {
  attemptId: string;
  runId: string;
  output: unknown;
  correlationId: string;
  publicationVersion: number | null;
}

interface Pending {
  item: PlainSuccess;
  done: (ended: boolean) => void;
  fail: (err: unknown) => void;
}

/**
 * Ends successful attempts that wrote nothing in batches (group commit): one
 * statement per flush does for each what attempt.ts's transaction does for one
 * (finish.ts closeAttempt, succeedRun, run-events.ts recordRunEvent): the
 * attempts still `running` become `succeeded` (the fence: an attempt marked
 * lost meanwhile drops out, and so do its run and event), their runs
 * `succeeded` with their output, and one `task.run.succeeded` event each.
 * A handler that wrote cannot come here: its success commits with its writes.
 *
 * A flush starts FLUSH_DELAY_MS after the first success arrives (at once with
 * MAX_PER_FLUSH waiting), and while one runs the next successes wait for it:
 * under load each statement carries what arrived during the previous one.
 * `kick` moves the events on once a flush inserted any.
 */
export class SuccessBatch {
  private readonly pending: Pending[] = [];
  private flushing = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly db: () => SqlClient, private readonly kick: () => void) {}

  /** Answers once the success is written: true, or false when the attempt was no longer `running` (fenced out). */
  end(item: PlainSuccess): Promise<boolean> {
    return new Promise<boolean>((done, fail) => {
      this.pending.push({ item, done, fail });
      if (this.flushing) return; // the running flush takes it next
      if (this.pending.length >= MAX_PER_FLUSH) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
    });
  }

  private async flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_PER_FLUSH);
        try {
          const ended = await this.write(batch.map((p) => p.item));
          for (const p of batch) p.done(ended.has(p.item.attemptId));
          if (ended.size > 0) this.kick();
        } catch (err) {
          for (const p of batch) p.fail(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async write(items: PlainSuccess[]): Promise<Set<string>> {
    const rows = items.map((i) => ({
      attempt_id: i.attemptId, run_id: i.runId, output: i.output ?? null, correlation_id: i.correlationId, publication_version: i.publicationVersion,
    }));
    const res = await this.db().query<{ attempt_id: string }>(
      `WITH item AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(attempt_id uuid, run_id uuid, output jsonb, correlation_id text, publication_version bigint)
       ), attempt AS (
         UPDATE ${S}.task_attempts a SET state = 'succeeded', finished_at = now(), error = NULL
         FROM item WHERE a.id = item.attempt_id AND a.state = 'running'
         RETURNING a.id
       ), run AS (
         UPDATE ${S}.task_runs r SET state = 'succeeded', output = COALESCE(item.output, 'null'::jsonb), error = NULL, finished_at = now()
         FROM item JOIN attempt ON attempt.id = item.attempt_id
         WHERE r.id = item.run_id AND r.state = 'running'
         RETURNING r.id, r.tenant_id, r.project_id, r.branch, item.attempt_id, item.correlation_id, item.publication_version
       ), event AS (
         INSERT INTO ${S}.outbox (event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version)
         SELECT gen_random_uuid(), $2, run.tenant_id, run.project_id, run.branch, 'TaskRun', run.id::text, '[]'::jsonb, run.correlation_id,
           COALESCE(run.publication_version, (SELECT max(p.version) FROM ${S}.publications p WHERE p.project_id = run.project_id AND p.branch = run.branch), 0)
         FROM run
       )
       SELECT id AS attempt_id FROM attempt`,
      [JSON.stringify(rows), RUN_EVENT_TYPES.succeeded],
    );
    return new Set(res.rows.map((r) => r.attempt_id));
  }
}
