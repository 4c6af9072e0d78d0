import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 13: explainability: the decision record of each audit row. Shipped: never edit it, add a new one. */
export const m0013: Migration = {
  version: 13,
  name: 'explainability: the decision record of each audit row',
  // Stage 6 records how a request was decided (runtime/pipeline/evidence.ts); GET
  // /api/Explainability/access reads it back by correlation id (audit_correlation_idx).
  // `details` (version 2) keeps the denial's missingGrants and bindingId.
  statements: [
    `ALTER TABLE ${S}.audit ADD COLUMN stage smallint NULL`,
    `ALTER TABLE ${S}.audit ADD COLUMN evaluated_filter jsonb NULL`,
    `ALTER TABLE ${S}.audit ADD COLUMN field_masks jsonb NOT NULL DEFAULT '[]'::jsonb`,
  ],
};
