import type { SqlClient } from '../storage/index.js';
import type { GovernanceSource, PublicationSource, QuotaEnforcer, ScopeDirectory } from '../runtime/services.js';

/** What the control-plane actors need from the node. */
export interface ControlActorDeps {
  db: SqlClient;
  scopes: ScopeDirectory;
  publications: PublicationSource;
  /** Dropped (here and cluster-wide) when a project's governance envelope changes. */
  governance: GovernanceSource;
  /** Dropped (here and cluster-wide) when one of a project's quotas changes. Absent: nothing caches quotas. */
  quotas?: Pick<QuotaEnforcer, 'invalidate'>;
}
