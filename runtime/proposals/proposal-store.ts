import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { notFound } from '../errors/service-error.js';
import { readHead } from '../control/schema-change.js';
import { readApprovals, type Approval } from './approvals.js';
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

type Head = Awaited<ReturnType<typeof readHead>>;

export interface ProposalAnalysis {
  baseVersion: number;
  /** The head publication the analysis (diff, validation, which approvals are current) was made on. */
  headVersion: number;
  base: Head;
  head: Head;
  diff: DiffEntry[];
  validation: { ok: boolean; problems: ValidationProblem[] };
  requiredApprovals: number;
  approvals: Approval[];
}

/**
 * Diff of head against base's CURRENT head, its validation on base's rows, and which approvals
 * still count: computed afresh every time, never stored. Head is read once: everything here
 * (and a merge that uses this analysis) is about that one head publication.
 */
export async function analyse(db: SqlExecutor, projectId: string, p: ProposalRow): Promise<ProposalAnalysis> {
  const base = await readHead(db, projectId, p.base, false);
  const head = await readHead(db, projectId, p.head, false);
  const diff = modelDiff(base.model, head.model);
  const validation = await validateAgainstRows(db, base.schema, base.model, head.model, diff);
  const prot = await db.query<{ required_approvals: number }>(`SELECT required_approvals FROM ${S}.branches WHERE project_id = $1 AND name = $2`, [projectId, p.base]);
  return {
    baseVersion: base.version,
    headVersion: head.version,
    base,
    head,
    diff,
    validation,
    requiredApprovals: Number(prot.rows[0]?.required_approvals ?? 0),
    approvals: await readApprovals(db, projectId, p.id, p.base, { headVersion: head.version, baseVersion: base.version }),
  };
}

/**
 * The gates a merge waits on (CONTRACT "Proposals": `unmetGates` ⊆ ["approvals", "validation"]).
 * Only current approvals count: of the head analysed, by an approver who still may approve.
 */
export function unmetGates(a: ProposalAnalysis): string[] {
  const out: string[] = [];
  if (a.approvals.filter((x) => x.current).length < a.requiredApprovals) out.push('approvals');
  if (!a.validation.ok) out.push('validation');
  return out;
}
