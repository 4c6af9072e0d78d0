import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 1: control plane. Shipped: never edit it, add a new one. */
export const m0001: Migration = {
  version: 1,
  name: 'control plane',
  statements: [
    `CREATE TABLE ${S}.tenants (
      id uuid PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      name text NOT NULL,
      state text NOT NULL DEFAULT 'active',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.projects (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES ${S}.tenants(id) ON DELETE RESTRICT,
      slug text NOT NULL,
      name text NOT NULL,
      parent_project_id uuid NULL REFERENCES ${S}.projects(id) ON DELETE RESTRICT,
      state text NOT NULL DEFAULT 'active',
      settings jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, slug))`,
    `CREATE INDEX projects_parent_idx ON ${S}.projects (parent_project_id)`,
    `CREATE TABLE ${S}.branches (
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      schema_name text NOT NULL UNIQUE,
      head_version bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, name))`,
    `CREATE TABLE ${S}.publications (
      project_id uuid NOT NULL,
      branch text NOT NULL,
      version bigint NOT NULL,
      model jsonb NOT NULL,
      descriptor_hash text NOT NULL,
      correlation_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, branch, version),
      FOREIGN KEY (project_id, branch) REFERENCES ${S}.branches(project_id, name) ON DELETE CASCADE)`,
    `CREATE TABLE ${S}.schema_journal (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL,
      branch text NOT NULL,
      action text NOT NULL,
      entity_name text NOT NULL,
      definition jsonb NULL,
      statements jsonb NOT NULL,
      from_version bigint NOT NULL,
      to_version bigint NOT NULL,
      state text NOT NULL,
      actor text NOT NULL,
      correlation_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX schema_journal_project_idx ON ${S}.schema_journal (project_id, branch, created_at)`,
  ],
};
