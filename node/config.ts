import { randomUUID } from 'node:crypto';
import type { LogLevel } from '../runtime/log.js';

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
  /** DATABASE_URL: PostgreSQL/CockroachDB through pg; when set, PGlite is not used. */
  databaseUrl: string | null;
  /** DB_POOL_SIZE: pg pool size. Default 10: a few connections per core keeps PostgreSQL busy without queueing. */
  dbPoolSize: number;
  /** NATS_URL: `nats://h1:4222,nats://h2:4222` selects cluster mode (actors and event log on NATS/JetStream); needs DATABASE_URL. */
  natsUrl: string | null;
  /** ACTOR_LEASE_TTL_MS: actor placement lease; a dead owner's actors move after about this long. Default 6 s. */
  actorLeaseTtlMs: number;
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
  /** CORS_ORIGIN: value of Access-Control-Allow-Origin; unset disables CORS. */
  corsOrigin: string | null;
  /** MAX_BODY_BYTES: REST body limit (spec: 10 MiB). */
  maxBodyBytes: number;
  /** MAX_RESPONSE_BYTES: largest JSON response body; a larger one answers 422 Response.TooLarge. Default 32 MiB. */
  maxResponseBytes: number;
  /** MAX_PAGE_SIZE: list page size cap (spec: 200). */
  maxPageSize: number;
  /** MAX_BATCH_ROWS: rows per batch mutation (spec: 1,000). */
  maxBatchRows: number;
  /** IDEMPOTENCY_RETENTION_HOURS: how long an Idempotency-Key answers with the prior result (spec: 24 h). */
  idempotencyRetentionMs: number;
  /** ACTOR_IDLE_MS: idle time before an actor passivates. Default 5 minutes. */
  actorIdleMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: `true` lets outbound webhooks target loopback, link-local and private addresses. Default false. */
  webhookAllowPrivateTargets: boolean;
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
    databaseUrl,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1, 1000),
    natsUrl,
    actorLeaseTtlMs: int(env, 'ACTOR_LEASE_TTL_MS', 6_000, 1_000, 600_000),
    eventStreamMaxAgeHours: int(env, 'EVENT_STREAM_MAX_AGE_HOURS', 168, 1, 24 * 3650),
    eventStreamMaxBytes: int(env, 'EVENT_STREAM_MAX_BYTES', 0, 0, Number.MAX_SAFE_INTEGER),
    eventDedupeWindowS: int(env, 'EVENT_DEDUPE_WINDOW_S', 120, 1, 86_400),
    adminToken,
    logLevel,
    nodeId: text(env, 'NODE_ID') ?? `node-${randomUUID().slice(0, 8)}`,
    corsOrigin: text(env, 'CORS_ORIGIN'),
    maxBodyBytes,
    maxResponseBytes,
    maxPageSize: int(env, 'MAX_PAGE_SIZE', 200, 1, 10_000),
    maxBatchRows: int(env, 'MAX_BATCH_ROWS', 1000, 1, 10_000),
    idempotencyRetentionMs: int(env, 'IDEMPOTENCY_RETENTION_HOURS', 24, 1, 24 * 30) * HOUR_MS,
    actorIdleMs: int(env, 'ACTOR_IDLE_MS', 300_000, 10, 86_400_000),
    webhookAllowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'),
    secretsKey: secretsKey(env),
    ...webhookTimes(env),
    realtimeMaxSubscriptionsPerProject: int(env, 'REALTIME_MAX_SUBSCRIPTIONS_PER_PROJECT', 1000, 1, 10_000_000),
    realtimeMaxBufferedBytes: int(env, 'REALTIME_MAX_BUFFERED_BYTES', MiB, 1024, 1024 * MiB),
  };
}

export const isInMemory = (dataDir: string): boolean => dataDir === 'memory:';
