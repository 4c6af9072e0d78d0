import type { SqlClient } from '../storage/index.js';
import type { GovernanceSource, PublicationSource, QuotaEnforcer, ScopeDirectory } from '../runtime/services.js';
import type { BindingStabilitySource } from '../runtime/versioning/stability-cache.js';

/** What the control-plane actors need from the node. */
export interface ControlActorDeps {
  db: SqlClient;
  scopes: ScopeDirectory;
  publications: PublicationSource;
  /** Dropped (here and cluster-wide) when a project's governance envelope changes. */
  governance: GovernanceSource;
  /** Dropped (here and cluster-wide) when one of a project's quotas changes. Absent: nothing caches quotas. */
  quotas?: Pick<QuotaEnforcer, 'invalidate'>;
  /** Dropped (here and cluster-wide) when a project's binding stability changes. Absent: nothing caches it. */
  stability?: Pick<BindingStabilitySource, 'invalidate'>;
}
