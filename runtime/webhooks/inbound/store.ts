import { randomBytes, randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../../storage/index.js';
import { ServiceError } from '../../errors/service-error.js';
import type { SecretStore } from '../../secrets/index.js';
import { startWebhookRuns } from '../../scheduling/webhook-runs.js';
import type { QueuedRun } from '../../scheduling/run-usage.js';

const S = PLATFORM_SCHEMA;

/** A receiver as the API shows it: never the secret, only its reference. */
export interface ReceiverRecord {
  id: string;
  name: string;
  publicReceiverKey: string;
  signingSecretRef: string;
  createdAt: string;
  updatedAt: string;
}

export interface ReceiverRow extends ReceiverRecord {
  tenantId: string;
  projectId: string;
  /**
   * The platform secret store's id (`signingSecretRef` is this id). Null only
   * on rows written by the retired receiver-sealed format (its `sealed_secret`
   * column is never read): such a receiver refuses deliveries until a new
   * signingSecret is set.
   */
  secretId: string | null;
}

const COLUMNS = `id, tenant_id AS "tenantId", project_id AS "projectId", name, public_key AS "publicReceiverKey", secret_id AS "secretId",
  signing_secret_ref AS "signingSecretRef", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** `whr_` + 24 random bytes (base64url, 32 chars): globally unique and unguessable. */
export const newPublicReceiverKey = (): string => `whr_${randomBytes(24).toString('base64url')}`;
export const PUBLIC_KEY_RE = /^whr_[A-Za-z0-9_-]{32}$/;

export const toRecord = (r: ReceiverRow): ReceiverRecord => ({
  id: r.id, name: r.name, publicReceiverKey: r.publicReceiverKey, signingSecretRef: r.signingSecretRef, createdAt: r.createdAt, updatedAt: r.updatedAt,
});

/**
 * Creates a receiver; its secret goes only to the platform secret store (the
 * row keeps the id). `generated` secrets also get a one-time reveal token.
 * All in one transaction.
 */
export async function createReceiver(db: SqlClient, secrets: SecretStore, tenantId: string, projectId: string, name: string, secret: string, generated: boolean): Promise<{ row: ReceiverRow; revealTokenId: string | null }> {
  return db.transaction(async (tx) => {
    const id = randomUUID();
    const secretId = await secrets.put(tx, projectId, secret);
    const res = await tx.query<ReceiverRow>(
      `INSERT INTO ${S}.webhook_receivers (id, tenant_id, project_id, name, public_key, secret_id, signing_secret_ref)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [id, tenantId, projectId, name, newPublicReceiverKey(), secretId, secretId],
    );
    const revealTokenId = generated ? await secrets.revealToken(tx, secretId) : null;
    return { row: res.rows[0]!, revealTokenId };
  });
}

export async function listReceivers(db: SqlExecutor, projectId: string): Promise<ReceiverRow[]> {
  return (await db.query<ReceiverRow>(`SELECT ${COLUMNS} FROM ${S}.webhook_receivers WHERE project_id = $1 ORDER BY created_at, id LIMIT 1000`, [projectId])).rows;
}

export async function readReceiver(db: SqlExecutor, projectId: string, id: string): Promise<ReceiverRow | null> {
  return (await db.query<ReceiverRow>(`SELECT ${COLUMNS} FROM ${S}.webhook_receivers WHERE project_id = $1 AND id = $2::uuid`, [projectId, id])).rows[0] ?? null;
}

export async function receiverByPublicKey(db: SqlExecutor, key: string): Promise<ReceiverRow | null> {
  return (await db.query<ReceiverRow>(`SELECT ${COLUMNS} FROM ${S}.webhook_receivers WHERE public_key = $1`, [key])).rows[0] ?? null;
}

/**
 * Renames and/or replaces the secret. A new secret goes to the secret store,
 * the old store entry is deleted, and any retired `sealed_secret` on the row
 * is cleared (so setting a secret also repairs an old-format receiver).
 */
export async function updateReceiver(db: SqlClient, secrets: SecretStore, row: ReceiverRow, patch: { name?: string; signingSecret?: string }): Promise<ReceiverRow | null> {
  return db.transaction(async (tx) => {
    const secretId = patch.signingSecret === undefined ? null : await secrets.put(tx, row.projectId, patch.signingSecret);
    const res = await tx.query<ReceiverRow>(
      secretId === null
        ? `UPDATE ${S}.webhook_receivers SET name = $3, updated_at = now() WHERE project_id = $1 AND id = $2::uuid RETURNING ${COLUMNS}`
        : `UPDATE ${S}.webhook_receivers SET name = $3, secret_id = $4, sealed_secret = NULL, signing_secret_ref = $5, updated_at = now()
           WHERE project_id = $1 AND id = $2::uuid RETURNING ${COLUMNS}`,
      secretId === null ? [row.projectId, row.id, patch.name ?? row.name] : [row.projectId, row.id, patch.name ?? row.name, secretId, secretId],
    );
    if (secretId !== null && row.secretId !== null) await tx.query(`DELETE FROM ${S}.secrets WHERE id = $1`, [row.secretId]);
    return res.rows[0] ?? null;
  });
}

export async function deleteReceiver(db: SqlClient, row: ReceiverRow): Promise<boolean> {
  return db.transaction(async (tx) => {
    const n = (await tx.query(`DELETE FROM ${S}.webhook_receivers WHERE project_id = $1 AND id = $2::uuid`, [row.projectId, row.id])).rowCount;
    if (row.secretId !== null) await tx.query(`DELETE FROM ${S}.secrets WHERE id = $1`, [row.secretId]);
    return n > 0;
  });
}

/**
 * The receiver's signing secret in clear (verification only; never returned).
 * A receiver without a secret-store id (the retired receiver-sealed format)
 * gets a 409 telling the admin to set a new secret: it never verifies anything.
 */
export async function receiverSecret(db: SqlExecutor, secrets: SecretStore, r: ReceiverRow): Promise<string> {
  if (r.secretId === null) {
    throw new ServiceError('CONFLICT', 'Webhook.ReceiverSecretOutdated',
      'this receiver\'s signing secret is stored in a retired format; set a new signingSecret with PUT /api/webhooks/receivers/{id}');
  }
  const secret = await secrets.get(db, r.secretId);
  if (secret === null) throw new Error('receiver secret missing from the secret store');
  return secret;
}

export interface AcceptedReceipt {
  receiptId: string;
  eventId: string;
  duplicate: boolean;
  /** Webhook-trigger runs queued with the receipt (runtime/scheduling/webhook-runs.ts); 0 for a duplicate. */
  runsQueued: QueuedRun[];
}

export interface InboundMessage {
  type: string;
  externalId: string;
  payload: unknown;
  correlationId: string;
  branch: string;
  publicationVersion: number;
}

/**
 * Records an idempotency receipt on (receiver, external id) and, for a new
 * one, an outbox row in the same transaction, so the event reaches the log
 * exactly when the receipt exists. Event type `webhook.inbound.<type>`;
 * its data is `{ entity: null, entityId: <receiptId>, changedFields: [], branch }`
 * (the outbox's envelope); the payload stays on the receipt. A new receipt
 * also queues the runs of the receiver's webhook triggers, in the same
 * transaction: a delivery gets its runs exactly when its receipt exists.
 */
export async function acceptInbound(db: SqlClient, r: ReceiverRow, m: InboundMessage): Promise<AcceptedReceipt> {
  return db.transaction(async (tx) => {
    const receiptId = randomUUID();
    const eventId = randomUUID();
    const ins = await tx.query<{ id: string; event_id: string }>(
      `INSERT INTO ${S}.webhook_receipts (id, receiver_id, project_id, external_id, type, event_id, payload, correlation_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) ON CONFLICT (receiver_id, external_id) DO NOTHING RETURNING id, event_id`,
      [receiptId, r.id, r.projectId, m.externalId, m.type, eventId, JSON.stringify(m.payload ?? null), m.correlationId],
    );
    if (ins.rows.length === 0) {
      const prior = await tx.query<{ id: string; event_id: string }>(
        `SELECT id, event_id FROM ${S}.webhook_receipts WHERE receiver_id = $1 AND external_id = $2`, [r.id, m.externalId],
      );
      const p = prior.rows[0];
      if (p === undefined) throw new Error('webhook receipt vanished after a conflict');
      return { receiptId: p.id, eventId: p.event_id, duplicate: true, runsQueued: [] };
    }
    await tx.query(
      `INSERT INTO ${S}.outbox (event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version)
       VALUES ($1, $2, $3, $4, $5, NULL, $6, '[]'::jsonb, $7, $8::bigint)`,
      [eventId, `webhook.inbound.${m.type}`, r.tenantId, r.projectId, m.branch, receiptId, m.correlationId, m.publicationVersion],
    );
    const runsQueued = await startWebhookRuns(tx, r.projectId, {
      eventId, correlationId: m.correlationId, webhook: { receiverId: r.id, receiptId, type: m.type, externalId: m.externalId, payload: m.payload ?? null },
    });
    return { receiptId, eventId, duplicate: false, runsQueued };
  });
}
