import type { ClusterBus } from '../cluster/cluster-bus.js';
import { type ApiKeyVerifier, revokedSessions } from '../runtime/identity/index.js';
import type { Logger } from '../runtime/log.js';
import type { CompiledPublication } from '../runtime/publication/compiled-publication.js';
import type { BindingStabilitySource } from '../runtime/versioning/stability-cache.js';
import type { GovernanceSource, GrantSource, PublicationSource, QuotaEnforcer, ScopeDirectory } from '../runtime/services.js';

/**
 * Longest a state, envelope or grant change waits for peers to confirm they dropped their cached copies.
 * Longer than CONTACT_STALE_MS (cluster/bus-contact.ts), which the grant changes rely on (docs/adr/0009).
 */
export const CONFIRM_MS = 2_000;

/**
 * Makes the per-node caches cluster-aware: whatever one node invalidates or
 * installs locally, it announces on the bus, and every other node drops the
 * same entries. Scope and grant changes wait for the peers' confirmations;
 * a missed publication notice is bounded by that cache's TTL (2–5 s).
 */
export function broadcastInvalidations(bus: ClusterBus, caches: { publications: PublicationSource; scopes: ScopeDirectory; grants: GrantSource }, peers: () => Promise<string[]> = async () => [], log: Logger | null = null): {
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
        await bus.publishConfirmed('scope', {}, peers().catch(() => []), CONFIRM_MS);
      },
    },
    grants: {
      held: (p, s, r) => grants.held(p, s, r),
      heldWithPolicy: (p, s, r) => grants.heldWithPolicy(p, s, r),
      // Every grant change (created, deleted, a project's realtime reauthorized) answers only once the live peers
      // dropped the project's grants; a peer that does not confirm in time has stopped trusting its cache (docs/adr/0009).
      invalidate: async (projectId, revoked) => {
        await grants.invalidate(projectId, revoked);
        await confirmOrFence(bus, 'grants', { projectId, revoked: revoked === true }, peers().catch(() => []), log);
      },
    },
  };
}

/**
 * A deleted API key is refused at once on every node: the deleting node
 * announces the id and answers once every live peer confirmed it dropped the
 * key and tombstoned it (a peer that does not confirm in time has stopped
 * trusting its key cache, docs/adr/0009).
 */
export function broadcastApiKeyRevocations(bus: ClusterBus, apiKeys: ApiKeyVerifier, peers: () => Promise<string[]>, log: Logger | null = null): void {
  bus.subscribe('apikey-revoked', (p) => void apiKeys.revoke(String(p.keyId), false));
  apiKeys.announceWith((keyId) => confirmOrFence(bus, 'apikey-revoked', { keyId }, peers().catch(() => []), log));
}

/**
 * Sends a grant-shaped change (a grant or an API key revoked) to every live
 * peer and waits for their confirmations. A peer still silent at the deadline
 * has had no echo for longer than CONTACT_STALE_MS, so it reads grants from
 * the database until contact returns, and drops what it cached before: the
 * change is in force there too, and the change answers (logged for operators).
 */
async function confirmOrFence(bus: ClusterBus, topic: string, payload: Record<string, unknown>, peers: Promise<string[]>, log: Logger | null): Promise<void> {
  const silent = await bus.publishConfirmed(topic, payload, peers, CONFIRM_MS);
  if (silent.length > 0) log?.warn('peers did not confirm a grant change in time; they serve grants from the database until their bus contact returns', { topic, silent });
}


/**
 * An envelope change applies from the next request on every node: the
 * changing node drops its cache, announces it, and answers only once every
 * other live member confirmed it dropped its own (bounded; a node that does
 * not answer in time falls back to the cache's TTL).
 */
export function broadcastGovernance(bus: ClusterBus, governance: GovernanceSource, peers: () => Promise<string[]>): GovernanceSource {
  bus.subscribe('governance', () => governance.invalidate());
  return {
    effective: (projectId) => governance.effective(projectId),
    invalidate: async () => {
      await governance.invalidate();
      await bus.publishConfirmed('governance', {}, peers().catch(() => []), CONFIRM_MS);
    },
  };
}

/**
 * A quota created, changed or deleted applies from the next request on every
 * node, as an envelope change does: the Project actor's reply waits until
 * the live peers confirmed they dropped the project's quotas (bounded).
 */
export function broadcastQuotas(bus: ClusterBus, quotas: QuotaEnforcer, peers: () => Promise<string[]>): QuotaEnforcer {
  bus.subscribe('quotas', (p) => quotas.invalidate(String(p.projectId)));
  return {
    admit: (ctx) => quotas.admit(ctx),
    summary: (projectId) => quotas.summary(projectId),
    concurrency: (projectId, kind) => quotas.concurrency(projectId, kind),
    invalidate: async (projectId) => {
      await quotas.invalidate(projectId);
      await bus.publishConfirmed('quotas', { projectId }, peers().catch(() => []), CONFIRM_MS);
    },
  };
}

/**
 * A binding's announced stability (Deprecated, Retired) applies from the next
 * request on every node, as a quota change does (bounded confirmation).
 */
export function broadcastStability(bus: ClusterBus, stability: BindingStabilitySource, peers: () => Promise<string[]>): BindingStabilitySource {
  bus.subscribe('binding-stability', (p) => stability.invalidate(String(p.projectId)));
  return {
    of: (projectId) => stability.of(projectId),
    invalidate: async (projectId) => {
      await stability.invalidate(projectId);
      await bus.publishConfirmed('binding-stability', { projectId }, peers().catch(() => []), CONFIRM_MS);
    },
  };
}
