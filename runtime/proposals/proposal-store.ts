import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { notFound } from '../errors/service-error.js';
import { readHead } from '../control/schema-change.js';
import { modelDiff, validateAgainstRows, type DiffEntry, type ValidationProblem } from './proposal-diff.js';

const S = PLATFORM_SCHEMA;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ProposalRow {
  id: string;
  title: string;
  base: string;
  head: string;
  description: string | null;
  state: 'open' | 'merged';
  merged_version: string | null;
  created_at: string;
}

export const COLUMNS = 'id, title, base, head, description, state, merged_version, created_at';

export const proposalRecord = (r: ProposalRow): Record<string, unknown> => ({
  id: r.id, title: r.title, base: r.base, head: r.head, description: r.description, state: r.state,
  ...(r.merged_version === null ? {} : { publicationVersion: Number(r.merged_version) }),
  createdAt: new Date(r.created_at).toISOString(),
});

export async function requireProposal(db: SqlExecutor, projectId: string, id: string): Promise<ProposalRow> {
  const res = UUID.test(id)
    ? await db.query<ProposalRow>(`SELECT ${COLUMNS} FROM ${S}.proposals WHERE project_id = $1 AND id = $2`, [projectId, id])
    : { rows: [] };
  const row = res.rows[0];
  if (row === undefined) throw notFound('Proposal.NotFound', 'proposal not found');
  return row;
}

export interface ProposalAnalysis {
  baseVersion: number;
  diff: DiffEntry[];
  validation: { ok: boolean; problems: ValidationProblem[] };
  requiredApprovals: number;
  approvals: Array<{ actor: string; subjectId?: string; at: string }>;
}

/** Diff of head against base's CURRENT head and its validation on base's rows: computed afresh every time, never stored. */
export async function analyse(db: SqlExecutor, projectId: string, p: ProposalRow): Promise<ProposalAnalysis> {
  const base = await readHead(db, projectId, p.base, false);
  const head = await readHead(db, projectId, p.head, false);
  const diff = modelDiff(base.model, head.model);
  const validation = await validateAgainstRows(db, base.schema, base.model, head.model, diff);
  const prot = await db.query<{ required_approvals: number }>(`SELECT required_approvals FROM ${S}.branches WHERE project_id = $1 AND name = $2`, [projectId, p.base]);
  const approvals = await db.query<{ actor: string; subject_id: string | null; at: string }>(
    `SELECT actor, subject_id, at FROM ${S}.proposal_approvals WHERE proposal_id = $1 ORDER BY at`, [p.id],
  );
  return {
    baseVersion: base.version,
    diff,
    validation,
    requiredApprovals: Number(prot.rows[0]?.required_approvals ?? 0),
    approvals: approvals.rows.map((a) => ({ actor: a.actor, ...(a.subject_id === null ? {} : { subjectId: a.subject_id }), at: new Date(a.at).toISOString() })),
  };
}

/** The gates a merge waits on (CONTRACT "Proposals": `unmetGates` ⊆ ["approvals", "validation"]). */
export function unmetGates(a: ProposalAnalysis): string[] {
  const out: string[] = [];
  if (a.approvals.length < a.requiredApprovals) out.push('approvals');
  if (!a.validation.ok) out.push('validation');
  return out;
}
