import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { ServiceError, accessDenied, conflict, validationFailed } from '../../errors/service-error.js';
import { grantCovered, heldGrants } from '../../pipeline/grants.js';
import { readHead } from '../../control/schema-change.js';
import { changesBetween } from '../../control/schema-rollback.js';
import { recordApproval } from '../../proposals/approvals.js';
import { COLUMNS, analyse, proposalRecord, requireProposal, unmetGates, type ProposalRow } from '../../proposals/proposal-store.js';
import { control } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { PROPOSAL_SCHEMAS as PS } from './proposal-schemas.js';

const S = PLATFORM_SCHEMA;

export const PROPOSALS_TAG: TagDecl = { name: 'Proposals', description: 'Schema changes of one branch proposed, approved and merged into another.' };

type ProposalContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors'>>;

/** Project-scoped, platform admin only (CONTRACT "Common"); never metered. */
const proposalOp = (id: string, contract: ProposalContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: PROPOSALS_TAG, errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

/**
 * Reason codes of the proposal bodies' 422s, as the hand-written checks answered them: a bad
 * branch name is `Branch.InvalidName`, anything else wrong with a field `Proposal.InvalidBody`.
 */
const PROPOSAL_REASONS = {
  prefix: 'Proposal',
  fields: { title: 'Proposal.InvalidBody', description: 'Proposal.InvalidBody', base: 'Branch.InvalidName', head: 'Branch.InvalidName', headPublicationVersion: 'Proposal.InvalidBody' },
};
const BY_ID = { id: { description: 'Proposal id.' } };
const GATE_ERRORS = [400, 401, 403, 404, 409, 422];

const create = proposalOp('ControlPlane.Proposal.Create', {
  summary: 'Propose merging head\'s schema changes into base',
  routes: [{ method: 'POST', path: 'proposals' }],
  body: PS.ControlProposalInput, reasons: PROPOSAL_REASONS,
  output: { status: 201, body: PS.ControlProposalSingle },
}, async (ctx) => {
  const { title, base, head, description } = ctx.inv.body as { title: string; base: string; head: string; description?: string | null };
  // The schema's maxLength counts code points; the limits were always UTF-16 units, so a title of 300 emoji stays refused.
  if (title.length > 500) throw validationFailed('Proposal.InvalidBody', "'title' must be a string of at most 500 characters", 'title');
  if (description !== undefined && description !== null && description.length > 10_000) {
    throw validationFailed('Proposal.InvalidBody', "'description' must be a string of at most 10000 characters", 'description');
  }
  // Semantic, so not in the schema: the two branch names must differ.
  if (base === head) throw validationFailed('Proposal.SameBranch', "'head' must differ from 'base'", 'head');
  const projectId = ctx.scope!.project.id;
  await readHead(ctx.services.db, projectId, base, false);
  await readHead(ctx.services.db, projectId, head, false);
  const res = await ctx.services.db.query<ProposalRow>(
    `INSERT INTO ${S}.proposals (id, project_id, title, base, head, description) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [randomUUID(), projectId, title, base, head, description ?? null],
  );
  return control(ctx, 'Proposal', 'created', proposalRecord(res.rows[0]!), 201);
});

const list = proposalOp('ControlPlane.Proposal.List', {
  summary: 'List the project\'s proposals', routes: [{ method: 'GET', path: 'proposals' }], output: { status: 200, body: PS.ControlProposalList },
}, async (ctx) => {
  const res = await ctx.services.db.query<ProposalRow>(`SELECT ${COLUMNS} FROM ${S}.proposals WHERE project_id = $1 ORDER BY created_at DESC LIMIT 500`, [ctx.scope!.project.id]);
  return control(ctx, 'Proposal', 'listed', res.rows.map(proposalRecord));
});

async function fullRecord(ctx: OperationContext, p: ProposalRow): Promise<Record<string, unknown>> {
  const a = await analyse(ctx.services.db, ctx.scope!.project.id, p);
  return {
    ...proposalRecord(p), diff: p.state === 'merged' ? [] : a.diff, validation: a.validation, approvals: a.approvals,
    baseVersion: a.baseVersion, headVersion: a.headVersion,
  };
}

const read = proposalOp('ControlPlane.Proposal.Read', {
  summary: 'Read a proposal with its fresh diff, validation against base\'s rows, and approvals',
  routes: [{ method: 'GET', path: 'proposals/:id' }], params: BY_ID, output: { status: 200, body: PS.ControlProposalDetailSingle },
}, async (ctx) => {
  const p = await requireProposal(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.id ?? '');
  return control(ctx, 'Proposal', 'read', await fullRecord(ctx, p));
});

/** Approvers: the admin, or a holder of `branch:<base>:approve` (known only once the proposal is read, so checked here). */
async function refuseNonApprover(ctx: OperationContext, base: string): Promise<void> {
  const held = await heldGrants(ctx);
  const grant = `branch:${base}:approve`;
  if (held !== 'all' && !grantCovered(held.grants, grant)) {
    throw accessDenied('Proposal.ApproverGrantMissing', `approving needs ${grant}`, { missingGrants: [grant] });
  }
}

/**
 * The head version the approver says it reviewed (`headPublicationVersion` in the body, optional,
 * its type checked by the schema): when given and head has moved since, the approval is refused
 * rather than recorded for a head the approver never saw.
 */
function reviewedVersion(body: unknown): number | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  return (body as { headPublicationVersion?: number | null }).headPublicationVersion ?? null;
}

const APPROVE_DESCRIPTION = 'Approves head\'s current publication (recorded as the approval\'s `headPublicationVersion`); a later change to head voids it (`current: false`). One approval per actor: approving the same head again answers 200 and adds nothing; approving after head moved replaces the void approval with a fresh one. An optional body `{ "headPublicationVersion": <the head reviewed> }` is refused with 409 `Proposal.HeadMoved` when head is no longer there. Anyone else answers 403 `Proposal.ApproverGrantMissing` with `missingGrants`.';

/**
 * Records an approval of head's CURRENT publication against base's: a later change to either voids it (runtime/proposals/approvals.ts).
 * Any user may call it: the approver grant is checked once the proposal (so its base) is read.
 */
const approve: DeclaredSpec = { ...proposalOp('ControlPlane.Proposal.Approve', {
  summary: 'Approve a proposal (admin, or a holder of `branch:<base>:approve`)', description: APPROVE_DESCRIPTION,
  routes: [{ method: 'POST', path: 'proposals/:id/approve' }], params: BY_ID,
  body: PS.ControlProposalApproveInput, bodyOptional: true, reasons: PROPOSAL_REASONS,
  output: { status: 200, body: PS.ControlProposalDetailSingle }, errors: GATE_ERRORS,
}, async (ctx) => {
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  const p = await requireProposal(db, projectId, ctx.inv.params.id ?? '');
  await refuseNonApprover(ctx, p.base);
  const reviewed = reviewedVersion(ctx.inv.body);
  const head = await readHead(db, projectId, p.head, false);
  const base = await readHead(db, projectId, p.base, false);
  if (reviewed !== null && reviewed !== head.version) {
    throw conflict('Proposal.HeadMoved', `head '${p.head}' is at publication ${head.version}, not ${reviewed}: review it again`, 'headPublicationVersion');
  }
  await recordApproval(db, p.id, ctx.actor.label, ctx.actor.subjectId, { headVersion: head.version, baseVersion: base.version });
  return control(ctx, 'Proposal', 'approved', await fullRecord(ctx, p));
}), authn: 'user' };

const MERGE_DESCRIPTION = 'Head\'s rows are not merged. Only current approvals count (of head\'s current publication, by an approver who still may approve); the merge applies exactly that head publication. 409 `Proposal.GatesNotMet` with `error.unmetGates` ⊆ `["approvals", "validation"]` and nothing changes; 409 `Proposal.AlreadyMerged`, `Proposal.NothingToMerge`, or `Proposal.BaseMoved` (base moved since the analysis). Adding a nullable field is metadata-only in PostgreSQL: the merge does not rewrite base\'s table (docs/proposals-and-deployments.md, "Benchmark").';

/**
 * Merge: gates and diff are computed afresh on base's current head (a base
 * that moved since the proposal was read is re-validated, never merged on a
 * stale plan); the changes run through the Project actor as ONE migration of
 * kind `merge`, whose settle step refuses a head that moved meanwhile.
 */
const merge = proposalOp('ControlPlane.Proposal.Merge', {
  summary: 'Merge: head\'s schema changes applied to base as one migration, one publication, one journal entry', description: MERGE_DESCRIPTION,
  routes: [{ method: 'POST', path: 'proposals/:id/merge' }], params: BY_ID,
  output: { status: 200, body: PS.ControlProposalMerged }, errors: GATE_ERRORS,
}, async (ctx) => {
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  const p = await requireProposal(db, projectId, ctx.inv.params.id ?? '');
  if (p.state === 'merged') throw conflict('Proposal.AlreadyMerged', 'the proposal is already merged');
  const a = await analyse(db, projectId, p);
  const unmet = unmetGates(a);
  if (unmet.length > 0) throw new ServiceError('CONFLICT', 'Proposal.GatesNotMet', `merge gates not met: ${unmet.join(', ')}`, { unmetGates: unmet });
  if (a.diff.length === 0) throw conflict('Proposal.NothingToMerge', "head's schema equals base's: nothing to merge");
  // The head publication the approvals were counted on, never head re-read: a push to head
  // during the merge cannot slip in (publications are immutable; base moving is refused below).
  const changes = changesBetween(a.base.model, a.head.model, a.base.schema);
  const res = await ctx.services.control.schemaCommand(projectId, {
    kind: 'migrate',
    migration: {
      branch: p.base, kind: 'merge', changes, actor: ctx.actor.label, correlationId: ctx.inv.correlationId,
      changeFields: { proposalId: p.id, head: p.head, headPublicationVersion: a.headVersion }, expectedFromVersion: a.baseVersion,
    },
  });
  if (res.kind !== 'migrated') throw new Error('unexpected schema command result');
  const version = res.result.publication.version;
  const upd = await db.query(`UPDATE ${S}.proposals SET state = 'merged', merged_version = $2 WHERE id = $1 AND state = 'open'`, [p.id, version]);
  if ((upd.rowCount ?? 0) === 0) throw conflict('Proposal.AlreadyMerged', 'the proposal is already merged');
  return control(ctx, 'Proposal', 'merged', { id: p.id, state: 'merged', publicationVersion: version });
});

/** `/api/proposals…` (CONTRACT "Proposals"). */
export const PROPOSAL_SPECS = { list, create, read, approve, merge };
