import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { notFound } from '../errors/service-error.js';
import { UUID_TEXT } from '../control/rows.js';

const S = PLATFORM_SCHEMA;

/** CONTRACT "Branches": the record every branch route answers. */
export interface BranchRecord {
  id: string;
  name: string;
  base: string | null;
  head: { publicationVersion: number };
  protection: { requireProposal: boolean; requiredApprovals: number };
  createdAt: string;
}

interface BranchRow {
  id: string;
  name: string;
  base: string | null;
  head_version: string | number;
  require_proposal: boolean;
  required_approvals: number;
  created_at: string | Date;
  schema_name: string;
}

const COLUMNS = 'id, name, base, head_version, require_proposal, required_approvals, created_at, schema_name';

const iso = (v: string | Date): string => (v instanceof Date ? v : new Date(v)).toISOString();

export const branchRecord = (r: BranchRow): BranchRecord => ({
  id: r.id,
  name: r.name,
  base: r.base,
  head: { publicationVersion: Number(r.head_version) },
  protection: { requireProposal: r.require_proposal, requiredApprovals: Number(r.required_approvals) },
  createdAt: iso(r.created_at),
});

/** A stored branch: its record and the SQL schema its tables live in. */
export interface StoredBranch {
  record: BranchRecord;
  schema: string;
}

const stored = (r: BranchRow): StoredBranch => ({ record: branchRecord(r), schema: r.schema_name });

/** The project's branches, oldest first (`main` first). */
export async function listBranches(db: SqlExecutor, projectId: string): Promise<BranchRecord[]> {
  const res = await db.query<BranchRow>(`SELECT ${COLUMNS} FROM ${S}.branches WHERE project_id = $1 ORDER BY created_at, name`, [projectId]);
  return res.rows.map(branchRecord);
}

/** How a route names a branch: `/api/branches/{name}` by name; `/api/Branch/branches/{id}` by id (or by name when not a UUID). */
export type BranchRef = { name: string } | { id: string };

export const refOfPathId = (value: string): BranchRef => (UUID_TEXT.test(value) ? { id: value.toLowerCase() } : { name: value });

export async function findBranch(db: SqlExecutor, projectId: string, ref: BranchRef, lock = false): Promise<StoredBranch | null> {
  const byId = 'id' in ref;
  const res = await db.query<BranchRow>(
    `SELECT ${COLUMNS} FROM ${S}.branches WHERE project_id = $1 AND ${byId ? 'id = $2::uuid' : 'name = $2'}${lock ? ' FOR UPDATE' : ''}`,
    [projectId, byId ? ref.id : ref.name],
  );
  return res.rows[0] === undefined ? null : stored(res.rows[0]);
}

export async function requireBranch(db: SqlExecutor, projectId: string, ref: BranchRef, lock = false): Promise<StoredBranch> {
  const b = await findBranch(db, projectId, ref, lock);
  if (b === null) throw notFound('Branch.NotFound', `branch '${'id' in ref ? ref.id : ref.name}' not found`);
  return b;
}
