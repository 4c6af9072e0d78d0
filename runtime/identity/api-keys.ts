import { createHash, randomBytes } from 'node:crypto';
import { RevocationSignals } from './revocation-signals.js';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import type { Actor } from '../identity/actor.js';
import { ALWAYS_TRUSTED, type CacheTrust } from '../cache/cache-trust.js';
import { grantPolicySet, type PolicyGrant } from '../policy/grant-policy.js';
import { sameHash } from './tokens.js';

/**
 * Project API keys: `plk_<key id, 32 hex>_<32 random bytes, base64url>`.
 *
 * The prefix lets stage 1 tell a key from a JWT or the admin token without
 * trying each; the embedded id finds the one row to check, so a verification
 * is a single primary-key read (then a map hit for `ttlMs`). Only
 * sha256(secret) is stored: the secret carries 256 random bits, so a slow
 * password hash would add nothing but latency on every request.
 */
export const API_KEY_PREFIX = 'plk_';
const RANDOM_BYTES = 32;
const KEY_RE = /^plk_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;
/** How long a key row read from the database is trusted (the bound on a missed cluster announcement). */
export const API_KEY_CACHE_TTL_MS = 3_000;
/** Entries kept at most; past it the cache starts over (a cold cache only costs a query per key). */
const MAX_ENTRIES = 100_000;
/** How long a deleted key id is remembered, so a read racing the delete cannot re-cache it. */
const TOMBSTONE_MS = 10 * 60_000;

export const isApiKeyToken = (token: string): boolean => token.startsWith(API_KEY_PREFIX);

const compactId = (keyId: string): string => keyId.replace(/-/g, '');
const uuidOf = (hex: string): string => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** A fresh secret for key `keyId` (a lower-case UUID). */
export const newApiKeySecret = (keyId: string): string => `${API_KEY_PREFIX}${compactId(keyId)}_${randomBytes(RANDOM_BYTES).toString('base64url')}`;

/** The key's non-secret handle (`plk_<hex id>`), shown in lists so a leaked secret can be matched to its key. */
export const apiKeyPrefix = (keyId: string): string => `${API_KEY_PREFIX}${compactId(keyId)}`;

/** The key id a presented secret claims, or null when it is not of our form. */
export function apiKeyIdOf(token: string): string | null {
  const m = KEY_RE.exec(token);
  return m === null ? null : uuidOf(m[1]!);
}

/** What `api_keys.secret_hash` stores: sha256 hex of the whole secret. */
export const apiKeyHash = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** A stored grant entry: the bare string, or the string with row-policy parts (enforced by stage 5, runtime/policy/). */
export type ApiKeyGrant = string | { grant: string; rowFilter?: unknown; check?: unknown; fields?: unknown };

export const grantText = (g: ApiKeyGrant): string => (typeof g === 'string' ? g : g.grant);

interface KeyRow { project_id: string; secret_hash: string; grants: ApiKeyGrant[]; scopes: unknown }
interface Entry { key: { hash: string; actor: Actor } | null; at: number; epoch: number }

type Listener = (keyId: string) => void;

/**
 * Verifies API keys for stage 1, with a per-node cache. `revoke(id)` (the
 * delete route on this node, or another node's announcement on the cluster
 * bus with `notify: false`) refuses the key at once. In cluster mode the
 * delete answers once the live peers confirmed (`announceWith`), and `trust`
 * (the node's bus contact) makes a node that may have missed the notice read
 * keys from the database (docs/adr/0009). The TTL is a backstop.
 */
export class ApiKeyVerifier {
  private readonly cache = new Map<string, Entry>();
  private readonly tombstones = new Map<string, number>();
  private readonly signals = new RevocationSignals();

  private announce: ((keyId: string) => Promise<void>) | null = null;

  constructor(
    private readonly db: SqlExecutor,
    private readonly ttlMs = API_KEY_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
    private readonly trust: CacheTrust = ALWAYS_TRUSTED,
  ) {}

  async verify(token: string): Promise<Actor | null> {
    const keyId = apiKeyIdOf(token);
    if (keyId === null || this.deleted(keyId)) return null;
    const t = this.now();
    const trusted = this.trust.trusted();
    const epoch = this.trust.epoch;
    let entry = trusted ? this.cache.get(keyId) : undefined;
    if (entry === undefined || entry.epoch !== epoch || t - entry.at >= this.ttlMs) {
      entry = { key: await this.load(keyId), at: t, epoch };
      // A delete that landed while we read wins over what we read.
      if (this.deleted(keyId)) return null;
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      if (trusted) this.cache.set(keyId, entry);
    }
    if (entry.key === null || !sameHash(apiKeyHash(token), entry.key.hash)) return null;
    return entry.key.actor;
  }

  /**
   * Refuses the key from now on on this node; with `notify` (a deletion made
   * here) it resolves once the cluster was told (`announceWith`). `notify: false`
   * for deletions learned from another node.
   */
  async revoke(keyId: string, notify = true): Promise<void> {
    const t = this.now();
    this.cache.delete(keyId);
    this.tombstones.set(keyId, t + TOMBSTONE_MS);
    if (this.tombstones.size > MAX_ENTRIES) for (const [id, until] of this.tombstones) if (until <= t) this.tombstones.delete(id);
    this.signals.emit(keyId, notify);
    if (notify && this.announce !== null) await this.announce(keyId);
  }

  /** Cluster mode: how a deletion made here reaches the other nodes; `revoke` waits for it. */
  announceWith(announce: (keyId: string) => Promise<void>): void {
    this.announce = announce;
  }

  /**
   * Called with every key id revoked on this node or announced by another
   * node (whatever `notify`): the realtime layer closes that key's
   * connections. Returns an unsubscribe.
   */
  onEnded(listener: Listener): () => void {
    return this.signals.onEnded(listener);
  }

  private deleted(keyId: string): boolean {
    const until = this.tombstones.get(keyId);
    if (until === undefined) return false;
    if (until <= this.now()) {
      this.tombstones.delete(keyId);
      return false;
    }
    return true;
  }

  private async load(keyId: string): Promise<Entry['key']> {
    const row = (await this.db.query<KeyRow>(
      `SELECT project_id::text AS project_id, secret_hash, grants, scopes FROM ${PLATFORM_SCHEMA}.api_keys WHERE id = $1`,
      [keyId],
    )).rows[0];
    if (row === undefined) return null;
    const raw: unknown = typeof row.grants === 'string' ? JSON.parse(row.grants) : row.grants;
    const grants = Array.isArray(raw) ? (raw as ApiKeyGrant[]) : [];
    const scopes: unknown = typeof row.scopes === 'string' ? JSON.parse(row.scopes) : row.scopes;
    const actor: Actor = {
      ...(Array.isArray(scopes) ? { mcpScopes: new Set(scopes.filter((s): s is string => typeof s === 'string')) } : {}),
      kind: 'apikey', label: `apikey:${keyId}`, subjectId: null, projectId: row.project_id, sessionId: null, roles: [], claims: {},
      apiKeyId: keyId, keyGrants: new Set(grants.map(grantText)),
      keyPolicy: grantPolicySet(grants.map((g): PolicyGrant => (typeof g === 'string' ? { grant: g } : g as PolicyGrant))),
    };
    return { hash: row.secret_hash, actor };
  }
}
