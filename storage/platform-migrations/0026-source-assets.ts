import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/**
 * Platform migration 26: source assets (CONTRACT "Source assets", docs/source-assets.md).
 * Folders and files are per project and branch; their rows go with the branch (CASCADE), and
 * a new branch gets a copy of its base's (runtime/branches/branch-copy.ts). The bytes live once
 * per project in `source_asset_blobs`, keyed by their sha256, so a copied branch, a renamed file
 * or a re-upload of the same bytes stores nothing twice. Shipped: never edit it, add a new one.
 */
export const m0026: Migration = {
  version: 26,
  name: 'source assets',
  statements: [
    `CREATE TABLE ${S}.source_asset_blobs (
      project_id uuid NOT NULL,
      sha256 text NOT NULL,
      size bigint NOT NULL,
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, sha256))`,
    `CREATE TABLE ${S}.source_asset_folders (
      project_id uuid NOT NULL,
      branch text NOT NULL,
      id uuid NOT NULL,
      path text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, branch, id),
      UNIQUE (project_id, branch, path),
      FOREIGN KEY (project_id, branch) REFERENCES ${S}.branches(project_id, name) ON DELETE CASCADE)`,
    `CREATE TABLE ${S}.source_asset_files (
      project_id uuid NOT NULL,
      branch text NOT NULL,
      id uuid NOT NULL,
      path text NOT NULL,
      sha256 text NOT NULL,
      size bigint NOT NULL,
      content_type text NOT NULL,
      version integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, branch, id),
      UNIQUE (project_id, branch, path),
      FOREIGN KEY (project_id, branch) REFERENCES ${S}.branches(project_id, name) ON DELETE CASCADE)`,
  ],
};
