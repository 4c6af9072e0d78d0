import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/** Platform migration 19: organizations, binding stability, installable surfaces, foundations and upgrades. Shipped: never edit it, add a new one. */
export const m0019: Migration = {
  version: 19,
  name: 'versioning and records',
  // Organizations group a tenant's projects (Tenant actor writes them). A project names at most
  // one, of its own tenant; an organization with projects cannot be deleted (RESTRICT); a
  // tenant's organizations go with it (a tenant with projects cannot be deleted anyway).
  // binding_stability holds the announced stability of a project's exposure bindings: a
  // binding with no row is Stable (docs/versioning-and-records.md). surfaces are installable
  // surfaces of a project; project_foundations and upgrade_plans are the version governance
  // of a self-hosted platform. All of them are written by the Project actor.
  statements: [
    `CREATE TABLE ${S}.organizations (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES ${S}.tenants(id) ON DELETE CASCADE,
      slug text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, slug))`,
    `ALTER TABLE ${S}.projects ADD COLUMN organization_id uuid NULL REFERENCES ${S}.organizations(id) ON DELETE RESTRICT`,
    `CREATE INDEX projects_organization_idx ON ${S}.projects (organization_id) WHERE organization_id IS NOT NULL`,
    `CREATE TABLE ${S}.binding_stability (
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      binding_id text NOT NULL,
      stability text NOT NULL,
      replacement text NULL,
      sunset_at timestamptz NULL,
      announced_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, binding_id))`,
    `CREATE TABLE ${S}.surfaces (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      kind text NOT NULL,
      version text NOT NULL,
      state text NOT NULL,
      installed_at timestamptz NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (project_id, name))`,
    `CREATE TABLE ${S}.project_foundations (
      project_id uuid PRIMARY KEY REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      profile_name text NOT NULL,
      foundation_version text NOT NULL,
      adopted_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ${S}.upgrade_plans (
      id uuid PRIMARY KEY,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      profile_name text NOT NULL,
      from_version text NULL,
      to_version text NOT NULL,
      steps jsonb NOT NULL,
      state text NOT NULL,
      execution_id uuid NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX upgrade_plans_project_idx ON ${S}.upgrade_plans (project_id, created_at)`,
  ],
};
