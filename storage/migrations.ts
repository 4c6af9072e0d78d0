import type { SqlClient } from './sql-client.js';
import { SQLSTATE, sqlstateOf } from './sql-errors.js';

export const PLATFORM_SCHEMA = 'plinth';

interface Migration {
  version: number;
  name: string;
  /** One statement per entry: CockroachDB and pg's extended protocol take one at a time. */
  statements: string[];
  /** CockroachDB's statements where its DDL differs from PostgreSQL's (e.g. a UNIQUE constraint is dropped as an index). */
  cockroachStatements?: string[];
}

const S = PLATFORM_SCHEMA;

/**
 * Platform tables, append-only list. Never edit a shipped migration; add one.
 * Control-plane rows (tenants, projects, branches, publications) are written
 * only by their owning actor; see actors/.
 */
const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'control plane',
    statements: [
      `CREATE TABLE ${S}.tenants (
        id uuid PRIMARY KEY,
        slug text NOT NULL UNIQUE,
        name text NOT NULL,
        state text NOT NULL DEFAULT 'active',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${S}.projects (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES ${S}.tenants(id) ON DELETE RESTRICT,
        slug text NOT NULL,
        name text NOT NULL,
        parent_project_id uuid NULL REFERENCES ${S}.projects(id) ON DELETE RESTRICT,
        state text NOT NULL DEFAULT 'active',
        settings jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (tenant_id, slug))`,
      `CREATE INDEX projects_parent_idx ON ${S}.projects (parent_project_id)`,
      `CREATE TABLE ${S}.branches (
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        schema_name text NOT NULL UNIQUE,
        head_version bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, name))`,
      `CREATE TABLE ${S}.publications (
        project_id uuid NOT NULL,
        branch text NOT NULL,
        version bigint NOT NULL,
        model jsonb NOT NULL,
        descriptor_hash text NOT NULL,
        correlation_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, branch, version),
        FOREIGN KEY (project_id, branch) REFERENCES ${S}.branches(project_id, name) ON DELETE CASCADE)`,
      `CREATE TABLE ${S}.schema_journal (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL,
        branch text NOT NULL,
        action text NOT NULL,
        entity_name text NOT NULL,
        definition jsonb NULL,
        statements jsonb NOT NULL,
        from_version bigint NOT NULL,
        to_version bigint NOT NULL,
        state text NOT NULL,
        actor text NOT NULL,
        correlation_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE INDEX schema_journal_project_idx ON ${S}.schema_journal (project_id, branch, created_at)`,
    ],
  },
  {
    version: 2,
    name: 'identity and grants',
    statements: [
      `CREATE TABLE ${S}.project_keys (
        project_id uuid PRIMARY KEY REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        signing_key text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${S}.identity_subjects (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        email text NOT NULL,
        password_hash text NOT NULL,
        state text NOT NULL DEFAULT 'active',
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (project_id, email))`,
      `CREATE TABLE ${S}.identity_sessions (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
        refresh_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_refreshed_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz NULL)`,
      `CREATE INDEX identity_sessions_subject_idx ON ${S}.identity_sessions (project_id, subject_id)`,
      `CREATE TABLE ${S}.capability_grants (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        subject_id uuid NULL,
        role text NULL,
        grant_text text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((subject_id IS NULL) <> (role IS NULL)))`,
      `CREATE INDEX capability_grants_project_idx ON ${S}.capability_grants (project_id)`,
    ],
  },
  {
    version: 3,
    name: 'data plane support: idempotency, outbox, events, audit',
    statements: [
      `CREATE TABLE ${S}.idempotency_keys (
        project_id uuid NOT NULL,
        branch text NOT NULL,
        operation_id text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        status int NOT NULL,
        body jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, branch, operation_id, key))`,
      `CREATE INDEX idempotency_keys_created_idx ON ${S}.idempotency_keys (created_at)`,
      `CREATE TABLE ${S}.outbox (
        seq bigserial PRIMARY KEY,
        event_id uuid NOT NULL UNIQUE,
        type text NOT NULL,
        tenant_id uuid NOT NULL,
        project_id uuid NOT NULL,
        branch text NOT NULL,
        entity text NULL,
        entity_id text NULL,
        changed_fields jsonb NOT NULL,
        correlation_id text NOT NULL,
        publication_version bigint NOT NULL,
        occurred_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${S}.events (
        seq bigserial PRIMARY KEY,
        id uuid NOT NULL UNIQUE,
        type text NOT NULL,
        tenant_id uuid NOT NULL,
        project_id uuid NOT NULL,
        entity text NULL,
        correlation_id text NOT NULL,
        publication_version bigint NOT NULL,
        occurred_at timestamptz NOT NULL,
        data jsonb NOT NULL)`,
      `CREATE INDEX events_project_idx ON ${S}.events (project_id, seq)`,
      `CREATE INDEX events_correlation_idx ON ${S}.events (correlation_id)`,
      `CREATE TABLE ${S}.audit (
        seq bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        correlation_id text NOT NULL,
        tenant_id uuid NULL,
        project_id uuid NULL,
        actor text NOT NULL,
        operation_id text NOT NULL,
        decision text NOT NULL,
        reason_code text NOT NULL,
        status int NOT NULL,
        details jsonb NOT NULL DEFAULT '{}'::jsonb)`,
      `CREATE INDEX audit_project_idx ON ${S}.audit (project_id, seq)`,
      `CREATE INDEX audit_correlation_idx ON ${S}.audit (correlation_id)`,
    ],
  },
  {
    version: 4,
    name: 'outbound webhooks: secrets, endpoints, deliveries',
    statements: [
      `CREATE TABLE ${S}.platform_keys (name text PRIMARY KEY, value text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${S}.secrets (
        id uuid PRIMARY KEY,
        project_id uuid NULL,
        sealed text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${S}.credential_reveals (
        id uuid PRIMARY KEY,
        secret_id uuid NOT NULL REFERENCES ${S}.secrets (id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL)`,
      `CREATE TABLE ${S}.webhook_endpoints (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL,
        project_id uuid NOT NULL,
        url text NOT NULL,
        description text NULL,
        event_type_filter text NULL,
        filter jsonb NULL,
        max_attempts int NOT NULL,
        base_delay_ms int NOT NULL,
        secret_id uuid NOT NULL REFERENCES ${S}.secrets (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE INDEX webhook_endpoints_project_idx ON ${S}.webhook_endpoints (project_id)`,
      `CREATE TABLE ${S}.webhook_deliveries (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL,
        endpoint_id uuid NOT NULL REFERENCES ${S}.webhook_endpoints (id) ON DELETE CASCADE,
        event_id uuid NOT NULL,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        state text NOT NULL,
        attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
        attempt_limit int NOT NULL,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claimed_until timestamptz NULL,
        claim_token uuid NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (endpoint_id, event_id))`,
      `CREATE INDEX webhook_deliveries_due_idx ON ${S}.webhook_deliveries (state, next_attempt_at)`,
      `CREATE INDEX webhook_deliveries_project_idx ON ${S}.webhook_deliveries (project_id, created_at)`,
      `CREATE TABLE ${S}.webhook_router_cursor (id int PRIMARY KEY, last_seq bigint NOT NULL, gap_since timestamptz NULL)`,
      `INSERT INTO ${S}.webhook_router_cursor (id, last_seq) SELECT 1, COALESCE(max(seq), 0) FROM ${S}.events`,
    ],
  },
  {
    version: 5,
    name: 'inbound webhooks: receivers and receipts',
    statements: [
      `CREATE TABLE ${S}.webhook_receivers (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL,
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        public_key text NOT NULL UNIQUE,
        secret_id uuid NULL REFERENCES ${S}.secrets (id),
        sealed_secret text NULL,
        signing_secret_ref text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((secret_id IS NULL) <> (sealed_secret IS NULL)))`,
      `CREATE INDEX webhook_receivers_project_idx ON ${S}.webhook_receivers (project_id)`,
      `CREATE TABLE ${S}.webhook_receipts (
        id uuid PRIMARY KEY,
        receiver_id uuid NOT NULL REFERENCES ${S}.webhook_receivers(id) ON DELETE CASCADE,
        project_id uuid NOT NULL,
        external_id text NOT NULL,
        type text NOT NULL,
        event_id uuid NOT NULL,
        payload jsonb NOT NULL,
        correlation_id text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (receiver_id, external_id))`,
      `CREATE INDEX webhook_receipts_project_idx ON ${S}.webhook_receipts (project_id, received_at)`,
    ],
  },
  {
    version: 6,
    name: 'retention: indexes on the swept timestamp columns',
    // The retention sweepers (runtime/retention) delete the oldest rows in batches ordered by
    // these columns; without an index each batch would scan the whole table. Audit and events
    // are append-only with a rising timestamp, so these btrees only grow at their right edge.
    // idempotency_keys already has idempotency_keys_created_idx.
    statements: [
      `CREATE INDEX audit_at_idx ON ${S}.audit (at)`,
      `CREATE INDEX events_occurred_idx ON ${S}.events (occurred_at)`,
      // Partial: only finished deliveries are ever swept; live ones stay out of this index.
      `CREATE INDEX webhook_deliveries_finished_idx ON ${S}.webhook_deliveries (updated_at) WHERE state IN ('Succeeded', 'DeadLettered')`,
    ],
  },
  {
    version: 7,
    name: 'API keys',
    // Only sha256(secret) is kept (the secret has 256 random bits, so a plain digest is enough).
    // The generated secret is also sealed once into `secrets` (reveal_once) for its one-time
    // CredentialReveal; the reveal deletes that copy (runtime/secrets), and so does deleting the key.
    statements: [
      `CREATE TABLE ${S}.api_keys (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES ${S}.projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        secret_hash text NOT NULL,
        grants jsonb NOT NULL,
        scopes jsonb NULL,
        reveal_secret_id uuid NULL REFERENCES ${S}.secrets (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE INDEX api_keys_project_idx ON ${S}.api_keys (project_id, created_at)`,
      `ALTER TABLE ${S}.secrets ADD COLUMN reveal_once boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    version: 8,
    name: 'identity federation (OIDC)',
    // A federated subject has no password and no address of its own: its e-mail claim lives on
    // its link, so it never takes (or is linked through) a password account's address.
    statements: [
      `ALTER TABLE ${S}.identity_subjects ALTER COLUMN password_hash DROP NOT NULL`,
      `ALTER TABLE ${S}.identity_subjects ALTER COLUMN email DROP NOT NULL`,
      `CREATE TABLE ${S}.identity_providers (
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        issuer text NOT NULL,
        client_id text NOT NULL,
        secret_id uuid NOT NULL REFERENCES ${S}.secrets (id),
        redirect_uri text NOT NULL,
        scopes text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, name))`,
      // Pending authorization requests; the state itself is kept only as a hash.
      `CREATE TABLE ${S}.identity_federation_states (
        state_hash text PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        provider text NOT NULL,
        code_verifier text NOT NULL,
        nonce text NOT NULL,
        redirect_uri text NOT NULL,
        expires_at timestamptz NOT NULL)`,
      `CREATE INDEX identity_federation_states_expires_idx ON ${S}.identity_federation_states (expires_at)`,
      // A provider's user is (issuer, sub): OIDC Core makes that pair, not the e-mail, the stable identifier.
      `CREATE TABLE ${S}.identity_federated_links (
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        issuer text NOT NULL,
        external_subject text NOT NULL,
        subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
        provider text NOT NULL,
        email text NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_login_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, issuer, external_subject))`,
      `CREATE INDEX identity_federated_links_subject_idx ON ${S}.identity_federated_links (subject_id)`,
    ],
  },
  {
    version: 9,
    name: 'identity management: subject claims, deactivation time, listing index',
    statements: [
      // Claims are carried in access tokens issued afterwards (runtime/identity/claims.ts bounds them).
      `ALTER TABLE ${S}.identity_subjects ADD COLUMN claims jsonb NOT NULL DEFAULT '{}'::jsonb`,
      `ALTER TABLE ${S}.identity_subjects ADD COLUMN deactivated_at timestamptz NULL`,
      // GET /api/IdentityManagement/subjects pages a project's subjects in (created_at, id) order.
      `CREATE INDEX identity_subjects_listing_idx ON ${S}.identity_subjects (project_id, created_at, id)`,
    ],
  },
  {
    version: 10,
    name: 'row policy and field masks on capability grants',
    statements: [
      // Kept as the JSON text the admin sent (the record echoes it exactly); NULL when the grant has no such part.
      `ALTER TABLE ${S}.capability_grants ADD COLUMN row_filter text NULL`,
      `ALTER TABLE ${S}.capability_grants ADD COLUMN check_filter text NULL`,
      `ALTER TABLE ${S}.capability_grants ADD COLUMN fields text NULL`,
    ],
  },
  {
    version: 11,
    name: 'governance envelopes',
    statements: [
      // One envelope per project, written only by the project actor; the effective envelope is merged down the ancestry (runtime/governance/).
      `CREATE TABLE ${S}.governance_envelopes (
        project_id uuid PRIMARY KEY REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        envelope jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now())`,
    ],
  },
  {
    version: 12,
    name: 'step-up: TOTP factors, WebAuthn credentials, challenges',
    statements: [
      // One TOTP factor per subject. The secrets are sealed in `secrets` (runtime/secrets); a
      // re-enrolment waits in pending_secret_id until its first code confirms it.
      `CREATE TABLE ${S}.identity_totp_factors (
        subject_id uuid PRIMARY KEY REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        secret_id uuid NULL,
        pending_secret_id uuid NULL,
        last_used_step bigint NULL,
        confirmed_at timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${S}.identity_webauthn_credentials (
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        credential_id text NOT NULL,
        subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
        public_key text NOT NULL,
        sign_count bigint NOT NULL DEFAULT 0,
        transports jsonb NOT NULL DEFAULT '[]'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NULL,
        PRIMARY KEY (project_id, credential_id))`,
      `CREATE INDEX identity_webauthn_credentials_subject_idx ON ${S}.identity_webauthn_credentials (subject_id)`,
      // Step-up challenges and pending WebAuthn registrations (purpose). attempts counts every
      // proof tried, claimed before the proof is checked, so concurrent guesses cannot exceed the limit.
      `CREATE TABLE ${S}.identity_challenges (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
        subject_id uuid NOT NULL REFERENCES ${S}.identity_subjects(id) ON DELETE CASCADE,
        purpose text NOT NULL,
        require_strength text NULL,
        reason text NULL,
        started_session_id uuid NULL,
        webauthn_challenge text NULL,
        attempts int NOT NULL DEFAULT 0,
        state text NOT NULL DEFAULT 'pending',
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        completed_at timestamptz NULL)`,
      `CREATE INDEX identity_challenges_expires_idx ON ${S}.identity_challenges (expires_at)`,
    ],
  },
  {
    version: 13,
    name: 'explainability: the decision record of each audit row',
    // Stage 6 records how a request was decided (runtime/pipeline/evidence.ts); GET
    // /api/Explainability/access reads it back by correlation id (audit_correlation_idx).
    // `details` (version 2) keeps the denial's missingGrants and bindingId.
    statements: [
      `ALTER TABLE ${S}.audit ADD COLUMN stage smallint NULL`,
      `ALTER TABLE ${S}.audit ADD COLUMN evaluated_filter jsonb NULL`,
      `ALTER TABLE ${S}.audit ADD COLUMN field_masks jsonb NOT NULL DEFAULT '[]'::jsonb`,
    ],
  },
  {
    version: 14,
    name: 'hot path: outbox without a second unique index on event_id',
    // Every create writes one outbox row; its random event_id made each insert touch a random
    // btree leaf (one more WAL record per create) for a uniqueness nothing relies on: outbox rows
    // are found by seq, ids are fresh random UUIDs, and events.id stays UNIQUE where ids are
    // looked up and deduplicated (docs/performance.md, W3).
    statements: [`ALTER TABLE ${S}.outbox DROP CONSTRAINT IF EXISTS outbox_event_id_key`],
    cockroachStatements: [`DROP INDEX IF EXISTS ${S}.outbox@outbox_event_id_key CASCADE`],
  },
  {
    version: 15,
    name: 'usage metering: usage events and their rollups',
    // Written by the buffered usage writer (runtime/usage/usage-writer.ts), read by the usage routes
    // and by quotas. (project_id, kind, at) serves a quota's "sum in the window" and the kind filter;
    // (project_id, at, id) serves the event listing's order and cursor; (at) the retention sweep.
    // usage_rollup_cursor is BillingDrainRollup's high-water mark: events with id <= last_id are in usage_rollups.
    statements: [
      `CREATE TABLE ${S}.usage_events (
        id bigserial PRIMARY KEY,
        tenant_id uuid NOT NULL,
        project_id uuid NOT NULL,
        kind text NOT NULL,
        quantity bigint NOT NULL,
        at timestamptz NOT NULL,
        operation_id text NOT NULL,
        correlation_id text NOT NULL,
        dimensions jsonb NULL)`,
      `CREATE INDEX usage_events_project_at_idx ON ${S}.usage_events (project_id, at, id)`,
      `CREATE INDEX usage_events_project_kind_at_idx ON ${S}.usage_events (project_id, kind, at)`,
      `CREATE INDEX usage_events_at_idx ON ${S}.usage_events (at)`,
      `CREATE TABLE ${S}.usage_rollup_cursor (id int PRIMARY KEY, last_id bigint NOT NULL)`,
      `INSERT INTO ${S}.usage_rollup_cursor (id, last_id) VALUES (1, 0)`,
      `CREATE TABLE ${S}.usage_rollups (
        project_id uuid NOT NULL,
        kind text NOT NULL,
        time_window text NOT NULL CHECK (time_window IN ('hour', 'day', 'calendar-month')),
        window_start timestamptz NOT NULL,
        dimensions_key text NOT NULL DEFAULT '',
        quantity bigint NOT NULL,
        PRIMARY KEY (project_id, time_window, kind, window_start, dimensions_key))`,
    ],
  },
  {
    version: 16,
    name: 'quotas: project quotas and their durable counters',
    // Quota rows are written by the Project actor only (one writer per project). quota_usage
    // holds the owner's counters per quota and window bucket (runtime/quota/ledger.ts), persisted
    // in batches off the request path so a restart starts from them; `used` only grows within a
    // bucket (GREATEST on upsert). docs/usage.md "Quotas".
    statements: [
      `CREATE TABLE ${S}.quotas (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL,
        project_id uuid NOT NULL,
        kind text NOT NULL,
        quota_limit bigint NOT NULL CHECK (quota_limit >= 0),
        mode text NOT NULL CHECK (mode IN ('hard', 'soft', 'monitor', 'reservation')),
        time_window text NOT NULL,
        dimensions jsonb NOT NULL DEFAULT '{}'::jsonb,
        state text NOT NULL DEFAULT 'active',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE INDEX quotas_project_idx ON ${S}.quotas (project_id, created_at, id)`,
      `CREATE TABLE ${S}.quota_usage (
        quota_id uuid NOT NULL REFERENCES ${S}.quotas (id) ON DELETE CASCADE,
        window_start timestamptz NOT NULL,
        used bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (quota_id, window_start))`,
    ],
  },
  {
    version: 17,
    name: 'webhook deliveries held by a quota',
    // A delivery a hard webhook.deliveries.monthly quota refused is not attempted: it waits
    // (no attempt recorded) until the window resets or the quota changes, and says why here.
    statements: [`ALTER TABLE ${S}.webhook_deliveries ADD COLUMN held_reason text NULL`],
  },
];

export const LATEST_PLATFORM_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Applies pending platform migrations. Safe when several nodes start at once:
 * each migration claims its version row first, inside its own transaction, so
 * a second node blocks on that row and then skips it.
 */
export async function migratePlatform(db: SqlClient): Promise<number[]> {
  await createIfNotExists(db, `CREATE SCHEMA IF NOT EXISTS ${S}`);
  await createIfNotExists(
    db,
    `CREATE TABLE IF NOT EXISTS ${S}.schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const done = new Set(
    (await db.query<{ version: number }>(`SELECT version FROM ${S}.schema_migrations`)).rows.map((r) => Number(r.version)),
  );
  const applied: number[] = [];
  let cockroach: boolean | null = null;
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    if (m.cockroachStatements !== undefined && cockroach === null) cockroach = await isCockroach(db);
    const statements = cockroach === true && m.cockroachStatements !== undefined ? m.cockroachStatements : m.statements;
    try {
      await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${S}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
        for (const stmt of statements) await tx.query(stmt);
      });
      applied.push(m.version);
    } catch (err) {
      // Only a clash on the version row means another node applied it; any other failure is real.
      const constraint = (err as { constraint?: string }).constraint;
      if (sqlstateOf(err) !== SQLSTATE.UNIQUE_VIOLATION || constraint !== 'schema_migrations_pkey') throw err;
    }
  }
  return applied;
}

async function isCockroach(db: SqlClient): Promise<boolean> {
  if (db.backend !== 'postgres') return false;
  const v = await db.query<{ v: string }>('SELECT version() AS v');
  return /cockroach/i.test(v.rows[0]?.v ?? '');
}

/**
 * Two sessions running the same CREATE … IF NOT EXISTS at once race on the
 * catalog's unique index: the loser waits for the winner's commit and gets 23505
 * (pg_namespace_nspname_index, pg_type_typname_nsp_index). Run again, it sees
 * the committed object and does nothing.
 */
async function createIfNotExists(db: SqlClient, sql: string): Promise<void> {
  try {
    await db.exec(sql);
  } catch (err) {
    // Two nodes racing on IF NOT EXISTS: the loser sees a catalog clash (23505 on pg_namespace/pg_type,
    // or 42710/42P07/42P06 "already exists"). By then the object exists, so running it again is a no-op.
    const code = sqlstateOf(err);
    if (code !== SQLSTATE.UNIQUE_VIOLATION && code !== '42710' && code !== '42P07' && code !== '42P06') throw err;
    await db.exec(sql);
  }
}
