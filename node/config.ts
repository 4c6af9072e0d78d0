import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { LogLevel } from '../runtime/log.js';
import { PGLITE_DEFAULT_SHARED_BUFFERS_MB } from '../storage/index.js';
import { DEFAULT_GRAPHQL_REQUEST_TIMEOUT_MS } from '../runtime/graphql/request-budget.js';
import { DEFAULT_HASH_COST, MAX_HASH_COST, MIN_HASH_COST } from '../runtime/identity/index.js';

/** Thrown at boot for a bad setting: fail at start, never under load. */
export class InvalidConfig extends Error {
  constructor(setting: string, message: string) {
    super(`${setting}: ${message}`);
    this.name = 'InvalidConfig';
  }
}

export const MiB = 1024 * 1024;
const HOUR_MS = 3_600_000;

export interface NodeConfig {
  /** HOST: interface to listen on. Default 127.0.0.1 (loopback: nothing is exposed unless asked). */
  host: string;
  /** PORT: HTTP/WebSocket/SSE port. Default 8080; 0 picks a free port. */
  port: number;
  /** GRPC_PORT: reserved for the gRPC adapter. Default 50051. */
  grpcPort: number;
  /** DATA_DIR: PGlite data and the generated admin token. Default ./.data; `memory:` keeps PGlite in memory (tests). */
  dataDir: string;
  /** PGLITE_SHARED_BUFFERS_MB: embedded PostgreSQL's shared_buffers in MiB, resident for the node's lifetime. Default 16: PostgreSQL's own 128 costs ~120 MB more RSS for no latency gain on a small node (docs/performance.md). */
  pgliteSharedBuffersMb: number;
  /** DATABASE_URL: PostgreSQL/CockroachDB through pg; when set, PGlite is not used. */
  databaseUrl: string | null;
  /** DB_POOL_SIZE: pg pool size. Default 10: a few connections per core keeps PostgreSQL busy without queueing. */
  dbPoolSize: number;
  /** NATS_URL: `nats://h1:4222,nats://h2:4222` selects cluster mode (actors and event log on NATS/JetStream); needs DATABASE_URL. */
  natsUrl: string | null;
  /** ACTOR_LEASE_TTL_MS: actor placement lease; a dead owner's actors move after about this long. Default 6 s. */
  actorLeaseTtlMs: number;
  /** NATS_STARTUP_DEADLINE_MS: how long boot retries NATS/JetStream setup (a leader election, a server down) before exiting. Default 60 s. */
  natsStartupDeadlineMs: number;
  /** EVENT_STREAM_MAX_AGE_HOURS: JetStream event log retention by age. Default 168 (7 days). */
  eventStreamMaxAgeHours: number;
  /** EVENT_STREAM_MAX_BYTES: JetStream event log retention by size; 0 (default) = no size limit (JetStream reserves max_bytes on every replica up front). */
  eventStreamMaxBytes: number;
  /** EVENT_DEDUPE_WINDOW_S: JetStream duplicate window for event ids. Default 120 s. */
  eventDedupeWindowS: number;
  /** SERVICE_ADMIN_TOKEN: platform admin bearer. Default: generated once, stored in DATA_DIR (0600). */
  adminToken: string | null;
  /** LOG_LEVEL: debug | info | warn | error | silent. Default info. */
  logLevel: LogLevel;
  /** NODE_ID: this node's name in logs and health. Default random. */
  nodeId: string;
  /** DEPLOYMENT_LEASE_MS: how long a deployment's driver may stay silent before another node (or this one's next start) reverts it. Default 15 s. */
  deploymentLeaseMs: number;
  /** CORS_ORIGIN: value of Access-Control-Allow-Origin; unset disables CORS. */
  corsOrigin: string | null;
  /** MAX_BODY_BYTES: REST body limit (spec: 10 MiB). */
  maxBodyBytes: number;
  /** MAX_UPLOAD_BYTES: lowers the raw-upload limit of source assets (default and most: 100 MiB). */
  maxUploadBytes: number;
  /** MAX_RESPONSE_BYTES: largest JSON response body; a larger one answers 422 Response.TooLarge. Default 32 MiB. */
  maxResponseBytes: number;
  /** MAX_PAGE_SIZE: list page size cap (spec: 200). */
  maxPageSize: number;
  /** MAX_BATCH_ROWS: rows per batch mutation (spec: 1,000). */
  maxBatchRows: number;
  /** IDEMPOTENCY_RETENTION_HOURS: how long an Idempotency-Key answers with the prior result (spec: 24 h). */
  idempotencyRetentionMs: number;
  /** GRAPHQL_REQUEST_TIMEOUT_MS: how long one GraphQL request may run its statements (docs/graphql.md "Time per request"). */
  graphqlRequestTimeoutMs: number;
  /** CHECK_ANSWERS: REST answers of declared operations are checked against their declared schema (tests run with it; a mismatch answers 500). */
  checkAnswers: boolean;
  /** CHECK_ANSWERS_LOG: a directory where the ids of operations whose answers were checked are noted (npm test's runner reports coverage from it). */
  checkAnswersLog: string | null;
  /** AUDIT_RETENTION_DAYS: audit rows older than this are deleted; 0 keeps them forever. Default 30. */
  auditRetentionMs: number;
  /** EVENT_RETENTION_DAYS: rows of the SQL event projection older than this are deleted (never before the webhook router passed them); 0 keeps them. Default: EVENT_STREAM_MAX_AGE_HOURS (7 days). */
  eventRetentionMs: number;
  /** WEBHOOK_DELIVERY_RETENTION_DAYS: succeeded and dead-lettered deliveries older than this (last update) are deleted; 0 keeps them. Default 30. */
  webhookDeliveryRetentionMs: number;
  /** TASK_RUN_RETENTION_DAYS: finished task runs (with their attempts) and trigger-audit rows older than this are deleted; 0 keeps them. Default 30. */
  taskRunRetentionMs: number;
  /** USAGE_EVENT_RETENTION_DAYS: usage events older than this (and already rolled up) are deleted; 0 keeps them. Default 90, at least 32 (quotas sum a calendar month from the events). */
  usageEventRetentionMs: number;
  /** USAGE_ROLLUP_INTERVAL_MS: how often BillingDrainRollup adds new usage events into the rollups. Default 5 s. */
  usageRollupIntervalMs: number;
  /** RETENTION_SWEEP_INTERVAL_MS: how often the retention sweepers run. Default 60 s. */
  retentionSweepIntervalMs: number;
  /** RETENTION_BATCH_ROWS: rows per retention DELETE. Default 5,000 on PostgreSQL, 1,000 on PGlite (one connection). */
  retentionBatchRows: number;
  /** RETENTION_BATCH_PAUSE_MS: pause between two retention batches, so requests get the pool. Default 50 ms. */
  retentionBatchPauseMs: number;
  /** ACTOR_IDLE_MS: idle time before an actor passivates. Default 5 minutes. */
  actorIdleMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: `true` lets outbound webhooks target loopback, link-local and private addresses. Default false. */
  webhookAllowPrivateTargets: boolean;
  /** FEDERATION_ALLOW_PRIVATE_ISSUERS: `true` lets OIDC providers (issuer, token endpoint, JWKS) sit on loopback, link-local and private addresses, over http too. Default false. */
  federationAllowPrivateIssuers: boolean;
  /** WEBAUTHN_RP_ID (default `localhost`) and WEBAUTHN_ORIGIN (comma-separated origins; default `http://localhost:<PORT>`): the WebAuthn relying party of step-up. */
  webauthn: { rpId: string; origins: string[] };
  /** SERVICE_SECRETS_KEY: base64 of 32 bytes, the AES-256-GCM key for stored secrets. Unset: a key generated once and kept in the platform database. */
  secretsKey: Buffer | null;
  /** WEBHOOK_TIMEOUT_MS: per-attempt request timeout. Default 10 s. */
  webhookTimeoutMs: number;
  /** WEBHOOK_CLAIM_LEASE_MS: claim lease of a delivery attempt; must exceed the timeout by 1 s. Default 30 s. */
  webhookClaimLeaseMs: number;
  /** REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT: concurrent realtime subscriptions per project, cluster-wide (spec: 1,000). */
  realtimeMaxSubscriptionsPerProject: number;
  /** REALTIME_MAX_BUFFERED_BYTES: unsent bytes past which a WebSocket client is closed with 1013. Default 1 MiB. */
  realtimeMaxBufferedBytes: number;
  /** REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION: subscriptions on one WebSocket connection. Default 100. */
  realtimeMaxSubscriptionsPerConnection: number;
  /** REALTIME_MAX_SUBSCRIPTIONS_PER_ACTOR: long-lived streams (realtime subscriptions, gRPC StreamList and Watch) of one user or API key in one project, counted per node (the platform admin is not counted). Default 200. */
  realtimeMaxSubscriptionsPerActor: number;
  /** REALTIME_MAX_FILTERS_PER_PROJECT: distinct realtime filters per project, counted per node. Default 500. */
  realtimeMaxFiltersPerProject: number;
  /** MAX_STREAMS_PER_NODE: long-lived streams of every actor together on this node (realtime subscriptions, SSE, graphql-ws, gRPC StreamList and Watch, event and audit tails). Default 2000. */
  maxStreamsPerNode: number;
  /** STREAM_PAGE_CONCURRENCY: gRPC StreamList page queries in flight on this node, all streams together (FIFO). Default 2. */
  streamPageConcurrency: number;
  /** REALTIME_FILTER_CHECK_CONCURRENCY: realtime filter queries in flight on this node, all projects together (each project runs one at a time). Default 2. */
  realtimeFilterCheckConcurrency: number;
  /** Failed-login throttling (docs/identity.md); per node, in memory. */
  loginThrottle: {
    /** LOGIN_MAX_FAILURES_PER_ACCOUNT: failures within the window that lock an account. Default 5. */
    accountMaxFailures: number;
    /** LOGIN_ACCOUNT_WINDOW_S: the account window, also the longest lockout. Default 900 (15 min). */
    accountWindowMs: number;
    /** LOGIN_LOCKOUT_BASE_S: first lockout; each further one doubles it. Default 60. */
    lockoutBaseMs: number;
    /** LOGIN_MAX_FAILURES_PER_ADDRESS: failures from one client address within its window before it is blocked. Default 30. */
    addressMaxFailures: number;
    /** LOGIN_ADDRESS_WINDOW_S: the address window. Default 60. */
    addressWindowMs: number;
  };
  /** PASSWORD_HASH_CONCURRENCY: password hashes running at once; 0 (default) = one less than the cores, 1 to 4. */
  passwordHashConcurrency: number;
  /**
   * PASSWORD_HASH_QUEUE: hashes waiting beyond that before a login answers 503 Identity.Busy.
   * Unset (null): 16 per running hash at the default cost (defaultPasswordHashQueue), so the
   * longest wait stays about 16 hash times at 2^17 (~5 s on an idle core) whatever the
   * concurrency; a lower test cost queues proportionally more (128 per running hash at 2^14).
   */
  passwordHashQueue: number | null;
  /**
   * PASSWORD_HASH_COST: log2 of scrypt's N for new password hashes. Default 17 (OWASP's
   * minimum, 128 MiB per hash); 14 to 16 are for test suites only (a warning at start).
   */
  passwordHashCost: number;
  /** REFRESH_REUSE_GRACE_MS: how long a just-rotated refresh token still answers with its successor. Default 10000; 0 disables. */
  refreshReuseGraceMs: number;
  /** AUTHORED_WORKERS: worker threads of the sandbox pool authored code runs in (CONTRACT "Sandbox and limits"). Default: the number of cores. */
  authoredWorkers: number;
}

/** WEBAUTHN_RP_ID and WEBAUTHN_ORIGIN; every origin must be an http(s) origin (no path). */
function webauthnRelyingParty(env: NodeJS.ProcessEnv, port: number): { rpId: string; origins: string[] } {
  const rpId = text(env, 'WEBAUTHN_RP_ID') ?? 'localhost';
  if (!/^[a-z0-9.-]{1,253}$/i.test(rpId)) throw new InvalidConfig('WEBAUTHN_RP_ID', 'must be a host name');
  const origins = (text(env, 'WEBAUTHN_ORIGIN') ?? `http://localhost:${port}`).split(',').map((o) => o.trim()).filter((o) => o !== '');
  for (const o of origins) {
    let u: URL | null = null;
    try { u = new URL(o); } catch { /* reported below */ }
    if (u === null || !/^https?:$/.test(u.protocol) || u.origin !== o) throw new InvalidConfig('WEBAUTHN_ORIGIN', `'${o}' is not an http(s) origin`);
  }
  if (origins.length === 0) throw new InvalidConfig('WEBAUTHN_ORIGIN', 'must name at least one origin');
  return { rpId, origins };
}

const LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new InvalidConfig(name, `expected an integer, got '${raw}'`);
  const n = Number(raw);
  if (n < min || n > max) throw new InvalidConfig(name, `must be between ${min} and ${max}`);
  return n;
}

const text = (env: NodeJS.ProcessEnv, name: string): string | null => {
  const v = env[name];
  return v === undefined || v === '' ? null : v;
};

const bool = (env: NodeJS.ProcessEnv, name: string): boolean => {
  const v = text(env, name);
  if (v === null || v === 'false') return false;
  if (v === 'true') return true;
  throw new InvalidConfig(name, `expected true or false, got '${v}'`);
};

function webhookTimes(env: NodeJS.ProcessEnv): { webhookTimeoutMs: number; webhookClaimLeaseMs: number } {
  const webhookTimeoutMs = int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000);
  const webhookClaimLeaseMs = int(env, 'WEBHOOK_CLAIM_LEASE_MS', 30_000, 1_000, 600_000);
  if (webhookClaimLeaseMs < webhookTimeoutMs + 1_000) throw new InvalidConfig('WEBHOOK_CLAIM_LEASE_MS', 'must exceed WEBHOOK_TIMEOUT_MS by at least 1000');
  return { webhookTimeoutMs, webhookClaimLeaseMs };
}

const DAY_MS = 24 * HOUR_MS;
/** Retention in days, 0 = keep forever; unset falls back to `fallbackMs`. */
const retentionDays = (env: NodeJS.ProcessEnv, name: string, fallbackMs: number): number =>
  env[name] === undefined || env[name] === '' ? fallbackMs : int(env, name, 0, 0, 36_500) * DAY_MS;

/** Usage events are the ledger quotas sum a calendar month from: keeping fewer than 32 days would undercount. */
function usageRetention(env: NodeJS.ProcessEnv): number {
  const ms = retentionDays(env, 'USAGE_EVENT_RETENTION_DAYS', 90 * DAY_MS);
  if (ms !== 0 && ms < 32 * DAY_MS) throw new InvalidConfig('USAGE_EVENT_RETENTION_DAYS', 'must be 0 (keep) or at least 32 days');
  return ms;
}

function secretsKey(env: NodeJS.ProcessEnv): Buffer | null {
  const v = text(env, 'SERVICE_SECRETS_KEY');
  if (v === null) return null;
  const key = Buffer.from(v, 'base64');
  if (key.length !== 32) throw new InvalidConfig('SERVICE_SECRETS_KEY', 'must be base64 of exactly 32 bytes');
  return key;
}

/** The only place process.env is read. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env): NodeConfig {
  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LEVELS.includes(logLevel)) throw new InvalidConfig('LOG_LEVEL', `one of ${LEVELS.join(', ')}`);
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new InvalidConfig('DATABASE_URL', 'must start with postgres:// or postgresql://');
  const natsUrl = text(env, 'NATS_URL');
  if (natsUrl !== null) {
    if (!natsUrl.split(',').every((u) => /^(nats:\/\/)?[\w.-]+:\d+$/.test(u.trim()))) throw new InvalidConfig('NATS_URL', 'expected nats://host:port[,nats://host:port…]');
    // Several nodes share rows, so they need a shared database: embedded PGlite is per process.
    if (databaseUrl === null) throw new InvalidConfig('NATS_URL', 'cluster mode needs DATABASE_URL (PostgreSQL or CockroachDB) shared by every node');
  }
  const maxBodyBytes = int(env, 'MAX_BODY_BYTES', 10 * MiB, 1024, 10 * MiB);
  // At most 256 MiB: V8 cannot build a string much past 512 Mi UTF-16 units at all. At least the body
  // limit, so a write's answer (its row, about the size of its body) fits.
  const maxResponseBytes = int(env, 'MAX_RESPONSE_BYTES', 32 * MiB, 1024, 256 * MiB);
  if (maxResponseBytes < maxBodyBytes) throw new InvalidConfig('MAX_RESPONSE_BYTES', `must be at least MAX_BODY_BYTES (${maxBodyBytes})`);
  const adminToken = text(env, 'SERVICE_ADMIN_TOKEN');
  if (adminToken !== null && (adminToken.length < 16 || /\s/.test(adminToken))) throw new InvalidConfig('SERVICE_ADMIN_TOKEN', 'must be at least 16 characters without spaces');
  return {
    host: text(env, 'HOST') ?? '127.0.0.1',
    port: int(env, 'PORT', 8080, 0, 65535),
    grpcPort: int(env, 'GRPC_PORT', 50051, 0, 65535),
    dataDir: text(env, 'DATA_DIR') ?? './.data',
    // 1 GiB cap: PGlite's WASM memory is at most 2 GiB in all, and the pool lives inside it.
    pgliteSharedBuffersMb: int(env, 'PGLITE_SHARED_BUFFERS_MB', PGLITE_DEFAULT_SHARED_BUFFERS_MB, 1, 1024),
    databaseUrl,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1, 1000),
    natsUrl,
    actorLeaseTtlMs: int(env, 'ACTOR_LEASE_TTL_MS', 6_000, 1_000, 600_000),
    natsStartupDeadlineMs: int(env, 'NATS_STARTUP_DEADLINE_MS', 60_000, 1_000, 3_600_000),
    eventStreamMaxAgeHours: int(env, 'EVENT_STREAM_MAX_AGE_HOURS', 168, 1, 24 * 3650),
    eventStreamMaxBytes: int(env, 'EVENT_STREAM_MAX_BYTES', 0, 0, Number.MAX_SAFE_INTEGER),
    eventDedupeWindowS: int(env, 'EVENT_DEDUPE_WINDOW_S', 120, 1, 86_400),
    adminToken,
    logLevel,
    nodeId: text(env, 'NODE_ID') ?? `node-${randomUUID().slice(0, 8)}`,
    deploymentLeaseMs: int(env, 'DEPLOYMENT_LEASE_MS', 15_000, 1_000, 600_000),
    corsOrigin: text(env, 'CORS_ORIGIN'),
    maxBodyBytes,
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 100 * MiB, 1024, 100 * MiB),
    maxResponseBytes,
    maxPageSize: int(env, 'MAX_PAGE_SIZE', 200, 1, 10_000),
    maxBatchRows: int(env, 'MAX_BATCH_ROWS', 1000, 1, 10_000),
    idempotencyRetentionMs: int(env, 'IDEMPOTENCY_RETENTION_HOURS', 24, 1, 24 * 30) * HOUR_MS,
    graphqlRequestTimeoutMs: int(env, 'GRAPHQL_REQUEST_TIMEOUT_MS', DEFAULT_GRAPHQL_REQUEST_TIMEOUT_MS, 100, 600_000),
    checkAnswers: bool(env, 'CHECK_ANSWERS'),
    checkAnswersLog: text(env, 'CHECK_ANSWERS_LOG'),
    auditRetentionMs: retentionDays(env, 'AUDIT_RETENTION_DAYS', 30 * DAY_MS),
    // The SQL projection keeps what the JetStream log keeps unless told otherwise.
    eventRetentionMs: retentionDays(env, 'EVENT_RETENTION_DAYS', int(env, 'EVENT_STREAM_MAX_AGE_HOURS', 168, 1, 24 * 3650) * HOUR_MS),
    webhookDeliveryRetentionMs: retentionDays(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 30 * DAY_MS),
    taskRunRetentionMs: retentionDays(env, 'TASK_RUN_RETENTION_DAYS', 30 * DAY_MS),
    usageEventRetentionMs: usageRetention(env),
    usageRollupIntervalMs: int(env, 'USAGE_ROLLUP_INTERVAL_MS', 5_000, 100, 3_600_000),
    retentionSweepIntervalMs: int(env, 'RETENTION_SWEEP_INTERVAL_MS', 60_000, 1_000, 86_400_000),
    // PGlite is one connection: a 5,000-row DELETE holds every request for ~50 ms, 1,000 for ~20 ms (docs/performance.md).
    retentionBatchRows: int(env, 'RETENTION_BATCH_ROWS', databaseUrl === null ? 1_000 : 5_000, 1, 100_000),
    retentionBatchPauseMs: int(env, 'RETENTION_BATCH_PAUSE_MS', 50, 0, 60_000),
    actorIdleMs: int(env, 'ACTOR_IDLE_MS', 300_000, 10, 86_400_000),
    webhookAllowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'),
    federationAllowPrivateIssuers: bool(env, 'FEDERATION_ALLOW_PRIVATE_ISSUERS'),
    webauthn: webauthnRelyingParty(env, int(env, 'PORT', 8080, 0, 65535)),
    secretsKey: secretsKey(env),
    ...webhookTimes(env),
    realtimeMaxSubscriptionsPerProject: int(env, 'REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT', 1000, 1, 10_000_000),
    realtimeMaxBufferedBytes: int(env, 'REALTIME_MAX_BUFFERED_BYTES', MiB, 1024, 1024 * MiB),
    realtimeMaxSubscriptionsPerConnection: int(env, 'REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION', 100, 1, 10_000_000),
    realtimeMaxSubscriptionsPerActor: int(env, 'REALTIME_MAX_SUBSCRIPTIONS_PER_ACTOR', 200, 1, 10_000_000),
    realtimeMaxFiltersPerProject: int(env, 'REALTIME_MAX_FILTERS_PER_PROJECT', 500, 1, 1_000_000),
    realtimeFilterCheckConcurrency: int(env, 'REALTIME_FILTER_CHECK_CONCURRENCY', 2, 1, 1000),
    maxStreamsPerNode: int(env, 'MAX_STREAMS_PER_NODE', 2000, 1, 10_000_000),
    streamPageConcurrency: int(env, 'STREAM_PAGE_CONCURRENCY', 2, 1, 1000),
    loginThrottle: {
      accountMaxFailures: int(env, 'LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1, 1_000_000),
      accountWindowMs: int(env, 'LOGIN_ACCOUNT_WINDOW_S', 900, 1, 86_400) * 1000,
      lockoutBaseMs: int(env, 'LOGIN_LOCKOUT_BASE_S', 60, 1, 86_400) * 1000,
      addressMaxFailures: int(env, 'LOGIN_MAX_FAILURES_PER_ADDRESS', 30, 1, 1_000_000),
      addressWindowMs: int(env, 'LOGIN_ADDRESS_WINDOW_S', 60, 1, 86_400) * 1000,
    },
    // Each running hash holds 128 MiB at the default cost: 16 at once is already 2 GiB.
    passwordHashConcurrency: int(env, 'PASSWORD_HASH_CONCURRENCY', 0, 0, 16),
    passwordHashQueue: env.PASSWORD_HASH_QUEUE === undefined || env.PASSWORD_HASH_QUEUE === '' ? null : int(env, 'PASSWORD_HASH_QUEUE', 0, 0, 100_000),
    passwordHashCost: int(env, 'PASSWORD_HASH_COST', DEFAULT_HASH_COST, MIN_HASH_COST, MAX_HASH_COST),
    refreshReuseGraceMs: int(env, 'REFRESH_REUSE_GRACE_MS', 10_000, 0, 300_000),
    authoredWorkers: int(env, 'AUTHORED_WORKERS', availableParallelism(), 1, 256),
  };
}

export const isInMemory = (dataDir: string): boolean => dataDir === 'memory:';
