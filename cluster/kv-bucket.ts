import type { KV } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { retryJetStream } from './js-retry.js';
import { replicasFor, type ClusterConnection } from './nats-connection.js';

/** JetStream API error: "stream name already in use with a different configuration". */
const STREAM_NAME_IN_USE = 10058;

export interface BucketSpec {
  name: string;
  /** Bucket-wide max age of an entry (JetStream `max_age`); 0 means entries never expire. */
  ttlMs: number;
  history: number;
}

/**
 * Creates the bucket (idempotent when the config matches) or, when it exists
 * with another config (e.g. nodes started with different TTLs), opens it as
 * is and reports the TTL it really has: callers that fence on the TTL must
 * use that one. Retries through JetStream leader elections.
 */
export async function openBucket(conn: ClusterConnection, spec: BucketSpec, deadlineMs = 30_000): Promise<{ kv: KV; ttlMs: number }> {
  const replicas = replicasFor(conn);
  try {
    const kv = await retryJetStream(() => conn.kvm.create(spec.name, { replicas, ttl: spec.ttlMs, history: spec.history }), { deadlineMs });
    return { kv, ttlMs: spec.ttlMs };
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== STREAM_NAME_IN_USE) throw err;
  }
  const kv = await retryJetStream(() => conn.kvm.open(spec.name), { deadlineMs });
  const status = await retryJetStream(() => kv.status(), { deadlineMs });
  return { kv, ttlMs: status.ttl };
}

/** The KV rejected a compare-and-set: the key's last revision is not the one we expected. */
export function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

const SAFE_TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * KV keys allow `[-/_=.a-zA-Z0-9]` with `.` separating tokens. A token made of
 * `[A-Za-z0-9_-]` is kept as is (readable in `nats kv ls`); anything else
 * becomes `=` + base64url of its UTF-8 bytes. `=` never starts a kept token,
 * so the mapping is injective.
 */
export function kvToken(text: string): string {
  return SAFE_TOKEN.test(text) ? text : '=' + Buffer.from(text, 'utf8').toString('base64url');
}
