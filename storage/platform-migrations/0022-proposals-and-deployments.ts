import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 22: proposals (docs/proposals-and-deployments.md). Shipped: never edit it, add a new one. */
export const m0022: Migration = {
  version: 22,
  name: 'proposals',
  // A proposal names two branches of a project; its diff and validation are computed on
  // read and again at merge (never stored), so a merge never applies a stale plan.
  // Approvals are one row per actor (the primary key makes a second approval add nothing).
  statements: [
    `CREATE TABLE ${S}.proposals (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL,
      title text NOT NULL,
      base text NOT NULL,
      head text NOT NULL,
      description text NULL,
      state text NOT NULL DEFAULT 'open',
      merged_version bigint NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX proposals_project_idx ON ${S}.proposals (project_id, created_at)`,
    `CREATE TABLE ${S}.proposal_approvals (
      proposal_id uuid NOT NULL REFERENCES ${S}.proposals(id) ON DELETE CASCADE,
      actor text NOT NULL,
      subject_id text NULL,
      at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (proposal_id, actor))`,
  ],
};
