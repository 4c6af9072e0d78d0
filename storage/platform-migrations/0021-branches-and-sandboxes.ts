import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 21: branch records (id, base, protection) and sandboxes. Shipped: never edit it, add a new one. */
export const m0021: Migration = {
  version: 21,
  name: 'branches and sandboxes',
  // Branch rows existed since 0001 (project, name, schema, head); a branch now has an id for
  // `/api/Branch/branches/{id}`, the branch it was copied from, and its protection policy.
  // A sandbox is an ephemeral branch: its row goes with the branch (CASCADE), and the
  // StagingTtlSweeper deletes the branch once `expires_at` has passed. All written by the Project actor.
  statements: [
    `ALTER TABLE ${S}.branches ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid()`,
    `CREATE UNIQUE INDEX branches_id_idx ON ${S}.branches (id)`,
    `ALTER TABLE ${S}.branches ADD COLUMN base text NULL`,
    `ALTER TABLE ${S}.branches ADD COLUMN require_proposal boolean NOT NULL DEFAULT false`,
    `ALTER TABLE ${S}.branches ADD COLUMN required_approvals integer NOT NULL DEFAULT 0`,
    `CREATE TABLE ${S}.sandboxes (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL,
      branch text NOT NULL,
      source_branch text NOT NULL,
      seed_from text NULL,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (project_id, branch),
      FOREIGN KEY (project_id, branch) REFERENCES ${S}.branches(project_id, name) ON DELETE CASCADE)`,
    `CREATE INDEX sandboxes_expires_idx ON ${S}.sandboxes (expires_at)`,
  ],
};
