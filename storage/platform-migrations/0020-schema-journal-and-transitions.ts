import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 20: the schema journal in CONTRACT's shape, schema snapshots, schema transitions. Shipped: never edit it, add a new one. */
export const m0020: Migration = {
  version: 20,
  name: 'schema journal, snapshots and transitions',
  // change: the journal entry's public `change` ({ action, entityName, definition? } or a
  // multi-change action). plan: what the Project actor replays when it finishes an entry
  // interrupted by a crash (state 'pending': written before the DDL transaction, settled in it).
  // entity_names: every entity an entry touches (migration-history). Older rows keep
  // entity_name only; readers fall back to it. All written by the Project actor.
  statements: [
    `ALTER TABLE ${S}.schema_journal ADD COLUMN change jsonb NULL`,
    `ALTER TABLE ${S}.schema_journal ADD COLUMN plan jsonb NULL`,
    `ALTER TABLE ${S}.schema_journal ADD COLUMN entity_names text[] NOT NULL DEFAULT '{}'`,
    `ALTER TABLE ${S}.schema_journal ADD COLUMN settled_at timestamptz NULL`,
    `CREATE INDEX schema_journal_pending_idx ON ${S}.schema_journal (project_id) WHERE state = 'pending'`,
    `CREATE TABLE ${S}.schema_snapshots (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      branch text NOT NULL,
      publication_version bigint NOT NULL,
      entities jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.schema_transitions (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      branch text NOT NULL,
      entity_name text NOT NULL,
      kind text NOT NULL,
      spec jsonb NOT NULL,
      state text NOT NULL,
      phase text NULL,
      backfilled bigint NOT NULL DEFAULT 0,
      error text NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX schema_transitions_project_idx ON ${S}.schema_transitions (project_id, created_at)`,
  ],
};
