import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient } from '../../../storage/index.js';
import type { EventEnvelope } from '../../events/event-store.js';
import type { Logger } from '../../log.js';
import type { SecretStore } from '../../secrets/index.js';
import type { UsageSink } from '../../usage/sink.js';
import { ServiceError } from '../../errors/service-error.js';
import type { QuotaHold } from '../../quota/ledger.js';
import type { Metered } from '../../quota/units.js';
import { backoffMs, classify, deliveryPayload, excerpt, signatureHeader } from './delivery.js';
import { matches, type EndpointFilter } from './matching.js';
import { checkTarget } from './url-guard.js';

const S = PLATFORM_SCHEMA;
/** How long the router waits on a gap in the event log's seq before stepping over it. */
const GAP_GRACE_MS = 2_000;
/** Least time between two rounds started by kicks: webhooks wait at most this much longer, and a write burst costs a round per 25 ms, not per commit. */
const MIN_ROUND_GAP_MS = 25;

export interface DispatcherOptions {
  nodeId: string;
  allowPrivateTargets: boolean;
  /** Timer period. Default 200 ms. */
  intervalMs?: number;
  /** Deliveries claimed per round, sent concurrently. Default 64. */
  batchSize?: number;
  /** Claim lease: an attempt not finished by then becomes claimable again. Default 30 s (> the send timeout). */
  leaseMs?: number;
  /** Per-request timeout. Default 10 s. */
  timeoutMs?: number;
  /**
   * Where routing (cursor + new delivery rows, one transaction) commits. Default: the
   * dispatcher's client. The node passes its relaxed-durability client (ADR 0006): a
   * lost route is routed again (deliveries are unique per endpoint and event), and a
   * delivery is only sent after a synchronous claim, which makes its route durable first.
   */
  routeDb?: SqlClient;
  /** Where each attempt that sends a request is metered (`webhook.deliveries.monthly`); absent: not metered. */
  usage?: UsageSink;
  /** The node's quota ledger: `webhook.deliveries.monthly` quotas admit each attempt (docs/webhooks.md "Quotas"); absent: none apply. */
  quotas?: WorkAdmission;
}

/** What the dispatcher needs of the quota ledger (runtime/quota/ledger.ts). */
export interface WorkAdmission {
  admitWork(projectId: string, m: Metered, work: { operationId: string; correlationId: string }): Promise<QuotaHold | null>;
}

/** What operations need from the running webhook machinery (Services.webhooks). */
export interface OutboundWebhooks {
  readonly secrets: SecretStore;
  readonly allowPrivateTargets: boolean;
  /** New or rescheduled deliveries (or events) exist: run a round soon. */
  kick(): void;
}

interface EndpointRow { id: string; project_id: string; event_type_filter: string | null; filter: EndpointFilter | null; max_attempts: number; created_at: string | Date }
interface EventRow extends EventEnvelope { seq: string }
interface ClaimRow {
  id: string; event_id: string; payload: unknown; attempts: unknown[]; attempt_limit: number; claim_token: string;
  project_id: string; tenant_id: string | null; event_type: string;
  url: string; secret_id: string; sealed_secret: string | null; base_delay_ms: number;
}

/** What one attempt did, written back for the whole round in one statement. */
/** `attempt` null and `held` set: a quota held the delivery back, nothing was sent and no attempt is recorded. */
interface AttemptOutcome { id: string; claim_token: string; state: string; attempt: Record<string, unknown> | null; delay: number; held: string | null }

/**
 * Routes committed events to delivery rows and sends due deliveries. Runs on
 * every node; SQL does the coordination:
 * - routing reads the `events` projection after a shared cursor row locked
 *   FOR UPDATE (one router at a time), inserts one delivery per matching
 *   (endpoint, event) with ON CONFLICT DO NOTHING, and advances the cursor in
 *   the same transaction: at-least-once, deduplicated by the unique key;
 * - sending claims due rows under a lease (FOR UPDATE SKIP LOCKED) with a
 *   fresh claim token, and records the attempt only while it still holds that
 *   token, so two nodes never send the same attempt at once.
 */
export class WebhookDispatcher implements OutboundWebhooks {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** When the last round started, and the timer of a kick held back until MIN_ROUND_GAP_MS has passed. */
  private lastRoundAt = 0;
  private heldKick: NodeJS.Timeout | null = null;
  /** False when the last route() stopped at its batch limit (more events are waiting). */
  private routedAll = true;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  readonly allowPrivateTargets: boolean;
  readonly stats = { routed: 0, sent: 0, succeeded: 0, failed: 0, held: 0 };

  constructor(private readonly db: SqlClient, readonly secrets: SecretStore, private readonly log: Logger, private readonly opts: DispatcherOptions) {
    this.intervalMs = opts.intervalMs ?? 200;
    this.batchSize = opts.batchSize ?? 64;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.allowPrivateTargets = opts.allowPrivateTargets;
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.timer.unref();
    this.kick();
  }

  /**
   * Asks for a round. Under a stream of writes every outbox commit kicks; rounds are
   * spaced at least MIN_ROUND_GAP_MS apart so that one round routes the events of
   * many commits (a round is a six-statement transaction) instead of one each.
   * A round that filled its batch still runs the next one at once.
   */
  kick(): void {
    if (this.stopped) return;
    if (this.running !== null) {
      this.again = true;
      return;
    }
    const wait = this.lastRoundAt + MIN_ROUND_GAP_MS - Date.now();
    if (wait > 0) {
      if (this.heldKick === null) {
        this.heldKick = setTimeout(() => {
          this.heldKick = null;
          this.kick();
        }, wait);
        this.heldKick.unref();
      }
      return;
    }
    this.running = (async () => {
      try {
        let full: boolean;
        do {
          this.lastRoundAt = Date.now();
          this.again = false;
          await this.route();
          const n = await this.dispatchRound();
          full = !this.routedAll || n === this.batchSize;
        } while (full && !this.stopped);
      } catch (err) {
        this.log.warn('webhook dispatch round failed; will retry', { error: err instanceof Error ? err.message : String(err) });
      } finally {
        this.running = null;
      }
      // Kicks that came during the round get one more, spaced like any other.
      if (this.again) this.kick();
    })();
  }

  /** Moves new events into delivery rows. Returns the deliveries created. */
  async route(): Promise<number> {
    this.routedAll = true;
    return (this.opts.routeDb ?? this.db).transaction(async (tx) => {
      const cur = (await tx.query<{ last_seq: string; gap_expired: boolean | null }>(
        `SELECT last_seq, now() - gap_since > ($1::int * interval '1 millisecond') AS gap_expired FROM ${S}.webhook_router_cursor WHERE id = 1 FOR UPDATE`, [GAP_GRACE_MS],
      )).rows[0];
      if (cur === undefined) return 0;
      // Positions first, and whole events only for projects that have an endpoint: under a
      // stream of creates in projects without webhooks (the common case, bench W3) a round
      // reads seqs off the primary key instead of every event's row into Node.
      const positions = (await tx.query<{ seq: string; routed: boolean }>(
        `SELECT e.seq, EXISTS (SELECT 1 FROM ${S}.webhook_endpoints w WHERE w.project_id = e.project_id) AS routed
         FROM ${S}.events e WHERE e.seq > $1 ORDER BY e.seq LIMIT 500`, [cur.last_seq], 'plinth_webhook_positions',
      )).rows;
      if (positions.length === 0) return 0;
      const wanted = positions.filter((p) => p.routed).map((p) => p.seq);
      const events = wanted.length === 0 ? [] : (await tx.query<EventRow>(
        `SELECT seq, id, type, occurred_at AS "occurredAt", tenant_id AS "tenantId", project_id AS "projectId", publication_version AS "publicationVersion", correlation_id AS "correlationId", data
         FROM ${S}.events WHERE seq = ANY($1::bigint[]) ORDER BY seq`, [wanted],
      )).rows;
      const projects = [...new Set(events.map((e) => e.projectId))];
      const endpoints = projects.length === 0 ? [] : (await tx.query<EndpointRow>(
        `SELECT id, project_id, event_type_filter, filter, max_attempts, created_at FROM ${S}.webhook_endpoints WHERE project_id = ANY($1::uuid[])`, [projects],
      )).rows;
      const rows: Array<Record<string, unknown>> = [];
      for (const e of events) {
        const env: EventEnvelope = { id: e.id, type: e.type, occurredAt: new Date(e.occurredAt).toISOString(), tenantId: e.tenantId, projectId: e.projectId, publicationVersion: Number(e.publicationVersion), correlationId: e.correlationId, data: e.data };
        for (const ep of endpoints) {
          if (ep.project_id !== e.projectId || new Date(ep.created_at).getTime() > new Date(e.occurredAt).getTime()) continue;
          if (!matches(env, ep.event_type_filter, ep.filter)) continue;
          rows.push({ id: randomUUID(), project_id: e.projectId, endpoint_id: ep.id, event_id: e.id, event_type: e.type, payload: deliveryPayload(env), attempt_limit: ep.max_attempts });
        }
      }
      let created = 0;
      if (rows.length > 0) {
        const r = await tx.query(
          `INSERT INTO ${S}.webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, payload, state, attempt_limit)
           SELECT x.id, x.project_id, x.endpoint_id, x.event_id, x.event_type, x.payload, 'Pending', x.attempt_limit
           FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, project_id uuid, endpoint_id uuid, event_id uuid, event_type text, payload jsonb, attempt_limit int)
           ON CONFLICT (endpoint_id, event_id) DO NOTHING`, [JSON.stringify(rows)],
        );
        created = r.rowCount ?? rows.length;
      }
      // Advance over contiguous seqs only: a gap may be a move still committing (two drains at once).
      // A gap that outlives the grace is a rolled-back or conflicting insert and is stepped over.
      let last = BigInt(cur.last_seq);
      let gapExpired = cur.gap_expired === true;
      let blocked = false;
      for (const p of positions) {
        const seq = BigInt(p.seq);
        if (seq !== last + 1n) {
          if (!gapExpired) {
            blocked = true;
            break;
          }
          gapExpired = false;
        }
        last = seq;
      }
      await tx.query(
        `UPDATE ${S}.webhook_router_cursor SET last_seq = $1, gap_since = CASE WHEN NOT $2::boolean THEN NULL WHEN last_seq = $1 AND gap_since IS NOT NULL THEN gap_since ELSE now() END WHERE id = 1`,
        [last.toString(), blocked],
      );
      this.stats.routed += created;
      this.routedAll = !(positions.length === 500 && !blocked);
      return created;
    });
  }

  /** Claims a bounded batch of due deliveries and sends them concurrently. Returns how many it claimed. */
  private async dispatchRound(): Promise<number> {
    const claimed = (await this.db.query<ClaimRow>(
      `WITH due AS (
         SELECT id FROM ${S}.webhook_deliveries
         WHERE (state IN ('Pending', 'RetryScheduled') AND next_attempt_at <= now()) OR (state = 'Claimed' AND claimed_until < now())
         ORDER BY next_attempt_at LIMIT ${this.batchSize} FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE ${S}.webhook_deliveries d SET state = 'Claimed', claimed_until = now() + ($1::int * interval '1 millisecond'), claim_token = gen_random_uuid(), updated_at = now()
         FROM due WHERE d.id = due.id
         RETURNING d.id, d.endpoint_id, d.event_id, d.event_type, d.project_id, d.payload, d.attempts, d.attempt_limit, d.claim_token)
       SELECT c.*, p.tenant_id, ep.url, ep.secret_id, sec.sealed AS sealed_secret, ep.base_delay_ms
       FROM claimed c JOIN ${S}.webhook_endpoints ep ON ep.id = c.endpoint_id LEFT JOIN ${S}.projects p ON p.id = c.project_id
         LEFT JOIN ${S}.secrets sec ON sec.id = ep.secret_id`, [this.leaseMs],
    )).rows;
    if (claimed.length === 0) return 0;
    const round = Promise.all(claimed.map((row) => this.send(row)));
    this.inFlight.add(round);
    try {
      const outcomes = await round;
      // One statement records the round; each row only while this claim still holds it.
      await this.db.query(
        `UPDATE ${S}.webhook_deliveries d SET state = x.state,
           attempts = CASE WHEN x.attempt IS NULL THEN d.attempts ELSE d.attempts || jsonb_build_array(x.attempt) END,
           next_attempt_at = now() + (x.delay * interval '1 millisecond'), claimed_until = NULL, claim_token = NULL, held_reason = x.held, updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, claim_token uuid, state text, attempt jsonb, delay bigint, held text)
         WHERE d.id = x.id AND d.claim_token = x.claim_token`,
        [JSON.stringify(outcomes)],
      );
      for (const o of outcomes) if (o.state === 'RetryScheduled' && o.delay < this.intervalMs) setTimeout(() => this.kick(), o.delay).unref();
    } finally {
      this.inFlight.delete(round);
    }
    return claimed.length;
  }

  /**
   * One `webhook.deliveries.monthly` unit per attempt that sends a request
   * (an attempt refused before sending, by the target guard or a missing
   * secret, consumes nothing). The correlation id is the event's.
   */
  private meter(row: ClaimRow, at: string): void {
    if (this.opts.usage === undefined || row.tenant_id === null) return;
    this.opts.usage.record({
      tenantId: row.tenant_id, projectId: row.project_id, kind: 'webhook.deliveries.monthly', quantity: 1, at,
      operationId: 'Webhook.Delivery', correlationId: correlationOf(row),
      dimensions: { eventType: row.event_type },
    });
  }

  /**
   * The project's `webhook.deliveries.monthly` quotas for one attempt: null
   * when none applies; a hold to settle once the request went out; or the
   * hard answer, when the delivery must wait (`held`).
   */
  private async admit(row: ClaimRow): Promise<QuotaHold | null | { refused: ServiceError }> {
    if (this.opts.quotas === undefined) return null;
    try {
      return await this.opts.quotas.admitWork(row.project_id, { kind: 'webhook.deliveries.monthly', estimate: 1, eventType: row.event_type }, {
        operationId: 'Webhook.Delivery', correlationId: correlationOf(row),
      });
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'QUOTA_EXCEEDED') return { refused: err };
      throw err;
    }
  }

  /**
   * A hard (or reservation) quota refused the attempt: nothing is sent and no
   * attempt is recorded; the delivery keeps its state and waits until the
   * window resets, or until the project's quotas change (releaseHeld).
   */
  private held(row: ClaimRow, refused: ServiceError): AttemptOutcome {
    const reset = Date.parse(refused.details.headers?.['X-Service-Quota-Reset'] ?? '');
    const delay = Number.isFinite(reset) ? Math.max(1_000, reset - Date.now()) : 60_000;
    this.stats.held++;
    return { id: row.id, claim_token: row.claim_token, state: row.attempts.length === 0 ? 'Pending' : 'RetryScheduled', attempt: null, delay, held: refused.reasonCode };
  }

  /** The project's quotas changed: deliveries a quota held back are due again at once (the next claim checks them anew). */
  async releaseHeld(projectId: string): Promise<void> {
    const r = await this.db.query(
      `UPDATE ${S}.webhook_deliveries SET next_attempt_at = now(), updated_at = now()
       WHERE project_id = $1 AND held_reason IS NOT NULL AND state IN ('Pending', 'RetryScheduled')`, [projectId],
    );
    if ((r.rowCount ?? 0) > 0) this.kick();
  }

  /** Sends one attempt; never throws (a failure is the attempt's outcome). */
  private async send(row: ClaimRow): Promise<AttemptOutcome> {
    const started = Date.now();
    const at = new Date(started).toISOString();
    let status: number | null = null;
    let error: string | undefined;
    let hold: QuotaHold | null = null;
    try {
      const url = new URL(row.url);
      await checkTarget(url, this.allowPrivateTargets);
      if (row.sealed_secret === null) throw new Error('signing secret missing');
      const secret = this.secrets.unseal(row.secret_id, row.sealed_secret);
      const raw = JSON.stringify(row.payload);
      const admitted = await this.admit(row);
      if (admitted !== null && 'refused' in admitted) return this.held(row, admitted.refused);
      hold = admitted;
      this.meter(row, at);
      const res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'service-signature': signatureHeader(secret, raw, Math.floor(Date.now() / 1000)),
          'service-event-id': row.event_id,
          'user-agent': 'Plinth-Webhooks/1',
        },
        body: raw,
      });
      status = res.status;
      if (classify(status) !== 'success') error = `HTTP ${status}: ${await excerpt(res)}`;
      else await res.body?.cancel();
    } catch (err) {
      error = err instanceof Error ? (err.name === 'TimeoutError' ? `timed out after ${this.timeoutMs} ms` : err.message) : String(err);
      if (typeof (err as { reasonCode?: unknown }).reasonCode === 'string') error = `${(err as { reasonCode: string }).reasonCode}: ${error}`;
    }
    // Metered and counted once the request went out, whatever it answered (as the usage metering counts attempts).
    hold?.settleUnits(1);
    const durationMs = Date.now() - started;
    const kind = classify(status);
    const made = row.attempts.length + 1;
    const state = kind === 'success' ? 'Succeeded' : kind === 'permanent' || made >= row.attempt_limit ? 'DeadLettered' : 'RetryScheduled';
    const delay = state === 'RetryScheduled' ? backoffMs(row.base_delay_ms, made) : 0;
    const attempt = { at, status, durationMs, ...(error === undefined ? {} : { error: error.slice(0, 300) }) };
    this.stats.sent++;
    if (state === 'Succeeded') this.stats.succeeded++;
    else this.stats.failed++;
    return { id: row.id, claim_token: row.claim_token, state, attempt, delay, held: null };
  }

  /** Stops claiming and waits (bounded) for the sends in flight. */
  async stop(timeoutMs = this.timeoutMs + 2_000): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.heldKick !== null) clearTimeout(this.heldKick);
    const all = Promise.all([this.running, ...this.inFlight]);
    await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }
}

/** The correlation id of the write that produced the event (the event's id when it carries none). */
function correlationOf(row: ClaimRow): string {
  const data = (row.payload as { data?: { correlationId?: unknown } } | null)?.data;
  return typeof data?.correlationId === 'string' ? data.correlationId : row.event_id;
}
