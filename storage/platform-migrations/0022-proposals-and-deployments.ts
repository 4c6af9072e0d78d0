import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 22: proposals and deployments (docs/proposals-and-deployments.md). Shipped: never edit it, add a new one. */
export const m0022: Migration = {
  version: 22,
  name: 'proposals and deployments',
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
    // What an environment serves: without a row (or once main's head moved past `pinned_head`)
    // main's head; otherwise `pinned_version`, and during a ramp `ramp_version` for
    // `ramp_percent` of requests. Read by each node's publication registry on a cache miss.
    `CREATE TABLE ${S}.environments (
      project_id uuid NOT NULL,
      name text NOT NULL,
      pinned_branch text NOT NULL DEFAULT 'main',
      pinned_version bigint NOT NULL,
      pinned_head bigint NOT NULL,
      ramp_branch text NULL,
      ramp_version bigint NULL,
      ramp_percent integer NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, name))`,
    `CREATE TABLE ${S}.deployments (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL,
      environment text NOT NULL,
      target_branch text NOT NULL,
      target_version bigint NOT NULL,
      from_version bigint NOT NULL,
      ramp jsonb NULL,
      bake_seconds integer NOT NULL DEFAULT 0,
      state text NOT NULL,
      serving_version bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`,
    // One deployment in flight per environment, on every node: a second one is 409.
    `CREATE UNIQUE INDEX deployments_active_idx ON ${S}.deployments (project_id, environment) WHERE state IN ('pending', 'ramping', 'baking')`,
  ],
};
