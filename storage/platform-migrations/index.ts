import type { Migration } from './migration.js';
import { m0001 } from './0001-control-plane.js';
import { m0002 } from './0002-identity-and-grants.js';
import { m0003 } from './0003-data-plane-support.js';
import { m0004 } from './0004-outbound-webhooks.js';
import { m0005 } from './0005-inbound-webhooks.js';
import { m0006 } from './0006-retention.js';
import { m0007 } from './0007-api-keys.js';
import { m0008 } from './0008-identity-federation-oidc.js';
import { m0009 } from './0009-identity-management.js';
import { m0010 } from './0010-row-policy-and-field-masks-on-capability-grants.js';
import { m0011 } from './0011-governance-envelopes.js';
import { m0012 } from './0012-step-up.js';
import { m0013 } from './0013-explainability.js';
import { m0014 } from './0014-hot-path.js';
import { m0015 } from './0015-usage-metering.js';
import { m0016 } from './0016-quotas.js';
import { m0017 } from './0017-webhook-deliveries-held-by-a-quota.js';
import { m0018 } from './0018-usage-on-audit-rows.js';
import { m0019 } from './0019-versioning-and-records.js';
import { m0020 } from './0020-schema-journal-and-transitions.js';
import { m0021 } from './0021-branches-and-sandboxes.js';
import { m0022 } from './0022-proposals-and-deployments.js';
import { m0024 } from './0024-deployment-driver-lease.js';
import { m0025 } from './0025-approvals-bound-to-head.js';
import { m0026 } from './0026-source-assets.js';
import { m0027 } from './0027-handler-bundles.js';
import { m0028 } from './0028-authored-egress.js';
import { m0029 } from './0029-scheduling.js';

/**
 * Platform tables, append-only list, one file per migration. Never edit a
 * shipped migration; add one. Control-plane rows (tenants, projects,
 * branches, publications) are written only by their owning actor; see actors/.
 */
export const MIGRATIONS: readonly Migration[] = [
  m0001,
  m0002,
  m0003,
  m0004,
  m0005,
  m0006,
  m0007,
  m0008,
  m0009,
  m0010,
  m0011,
  m0012,
  m0013,
  m0014,
  m0015,
  m0016,
  m0017,
  m0018,
  m0019,
  m0020,
  m0021,
  m0022,
  m0024,
  m0025,
  m0026,
  m0027,
  m0028,
  m0029,
];
export { PLATFORM_SCHEMA } from './migration.js';
