import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 25: an approval names the head publication it reviewed (docs/proposals-and-deployments.md). Shipped: never edit it, add a new one. */
export const m0025: Migration = {
  version: 25,
  name: 'approvals bound to the head and base they reviewed',
  // A change to the head, or to the base (which changes the diff the approver saw), after an
  // approval voids it: the merge counts only approvals whose `head_version` and `base_version`
  // are the branches' versions at merge time. Rows from before this migration have neither,
  // so they count as void (their approver approves again to renew them).
  statements: [
    `ALTER TABLE ${S}.proposal_approvals ADD COLUMN head_version bigint NULL`,
    `ALTER TABLE ${S}.proposal_approvals ADD COLUMN base_version bigint NULL`,
  ],
};
