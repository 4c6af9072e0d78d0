import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 25: an approval names the head publication it reviewed (docs/proposals-and-deployments.md). Shipped: never edit it, add a new one. */
export const m0025: Migration = {
  version: 25,
  name: 'approvals bound to the head they reviewed',
  // A change to the head after an approval voids it: the merge counts only approvals whose
  // `head_version` is head's version at merge time. Rows from before this migration have none,
  // so they count as void (their approver approves again to renew them).
  statements: [`ALTER TABLE ${S}.proposal_approvals ADD COLUMN head_version bigint NULL`],
};
