import type { ClusterBus } from '../cluster/cluster-bus.js';
import type { ApiKeyVerifier } from '../runtime/identity/api-keys.js';
import { revokedSessions } from '../runtime/identity/index.js';
import type { CompiledPublication } from '../runtime/publication/compiled-publication.js';
import type { BindingStabilitySource } from '../runtime/versioning/stability-cache.js';
import type { GovernanceSource, GrantSource, PublicationSource, QuotaEnforcer, ScopeDirectory } from '../runtime/services.js';

/** Longest a state or envelope change waits for peers to confirm they dropped their cached copies. */
const CONFIRM_MS = 2_000;

/**
 * Makes the per-node caches cluster-aware: whatever one node invalidates or
 * installs locally, it announces on the bus, and every other node drops the
 * same entries. A missed notice is bounded by each cache's TTL (2–5 s).
 */
export function broadcastInvalidations(bus: ClusterBus, caches: { publications: PublicationSource; scopes: ScopeDirectory; grants: GrantSource }, peers: () => Promise<number> = async () => 0): {
  publications: PublicationSource;
  scopes: ScopeDirectory;
  grants: GrantSource;
} {
  const { publications, scopes, grants } = caches;
  bus.subscribe('publication', (p) => publications.invalidate(String(p.projectId)));
  bus.subscribe('scope', () => scopes.invalidate());
  bus.subscribe('grants', (p) => grants.invalidate(String(p.projectId), p.revoked === true));
  bus.subscribe('session-revoked', (p) => revokedSessions.add(String(p.sessionId), false));
  revokedSessions.onRevoked((sessionId) => bus.publish('session-revoked', { sessionId }));
  return {
    publications: {
      current: (t, p, b) => publications.current(t, p, b),
      serving: (t, p, c) => publications.serving(t, p, c),
      install: (pub: CompiledPublication) => {
        publications.install(pub);
        bus.publish('publication', { projectId: pub.record.projectId, branch: pub.record.branch, version: pub.version });
      },
      invalidate: (projectId) => {
        publications.invalidate(projectId);
        bus.publish('publication', { projectId });
      },
    },
    scopes: {
      tenant: (s) => scopes.tenant(s),
      project: (t, s) => scopes.project(t, s),
      branchExists: (p, b) => scopes.branchExists(p, b),
      // A tenant or project state change (suspend, resume, archive) waits for the peers, like an envelope change.
      invalidate: async () => {
        await scopes.invalidate();
        await bus.publishConfirmed('scope', {}, await peers().catch(() => 0), CONFIRM_MS);
      },
    },
    grants: {
      held: (p, s, r) => grants.held(p, s, r),
      heldWithPolicy: (p, s, r) => grants.heldWithPolicy(p, s, r),
      invalidate: (projectId, revoked) => {
        grants.invalidate(projectId, revoked);
        bus.publish('grants', { projectId, revoked: revoked === true });
      },
    },
  };
}

/**
 * A deleted API key is refused at once on every node: the deleting node
 * announces the id, the others drop it from their caches and tombstone it.
 * A missed notice is bounded by the key cache's TTL (API_KEY_CACHE_TTL_MS).
 */
export function broadcastApiKeyRevocations(bus: ClusterBus, apiKeys: ApiKeyVerifier): void {
  bus.subscribe('apikey-revoked', (p) => apiKeys.revoke(String(p.keyId), false));
  apiKeys.onRevoked((keyId) => bus.publish('apikey-revoked', { keyId }));
}


/**
 * An envelope change applies from the next request on every node: the
 * changing node drops its cache, announces it, and answers only once every
 * other live member confirmed it dropped its own (bounded; a node that does
 * not answer in time falls back to the cache's TTL).
 */
export function broadcastGovernance(bus: ClusterBus, governance: GovernanceSource, peers: () => Promise<number>): GovernanceSource {
  bus.subscribe('governance', () => governance.invalidate());
  return {
    effective: (projectId) => governance.effective(projectId),
    invalidate: async () => {
      await governance.invalidate();
      await bus.publishConfirmed('governance', {}, await peers().catch(() => 0), CONFIRM_MS);
    },
  };
}

/**
 * A quota created, changed or deleted applies from the next request on every
 * node, as an envelope change does: the Project actor's reply waits until
 * the live peers confirmed they dropped the project's quotas (bounded).
 */
export function broadcastQuotas(bus: ClusterBus, quotas: QuotaEnforcer, peers: () => Promise<number>): QuotaEnforcer {
  bus.subscribe('quotas', (p) => quotas.invalidate(String(p.projectId)));
  return {
    admit: (ctx) => quotas.admit(ctx),
    summary: (projectId) => quotas.summary(projectId),
    concurrency: (projectId, kind) => quotas.concurrency(projectId, kind),
    invalidate: async (projectId) => {
      await quotas.invalidate(projectId);
      await bus.publishConfirmed('quotas', { projectId }, await peers().catch(() => 0), CONFIRM_MS);
    },
  };
}

/**
 * A binding's announced stability (Deprecated, Retired) applies from the next
 * request on every node, as a quota change does (bounded confirmation).
 */
export function broadcastStability(bus: ClusterBus, stability: BindingStabilitySource, peers: () => Promise<number>): BindingStabilitySource {
  bus.subscribe('binding-stability', (p) => stability.invalidate(String(p.projectId)));
  return {
    of: (projectId) => stability.of(projectId),
    invalidate: async (projectId) => {
      await stability.invalidate(projectId);
      await bus.publishConfirmed('binding-stability', { projectId }, await peers().catch(() => 0), CONFIRM_MS);
    },
  };
}
