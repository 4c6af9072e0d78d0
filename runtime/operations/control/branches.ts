import type { BranchCommand, BranchCommandResult } from '../../branches/branch-commands.js';
import { listBranches, refOfPathId, requireBranch, type BranchRecord, type BranchRef } from '../../branches/branch-store.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { BRANCH_SCHEMAS as S } from './branch-schemas.js';

/** CONTRACT "Branches": a branch name is also an `X-Service-Branch` value. */
export const BRANCH_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export const BRANCHES_TAG: TagDecl = { name: 'Branches', description: 'Branches and sandboxes of the project (copy-on-create, protection).' };

type BranchContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors'>>;

/** Project-scoped (the scope headers name the project), platform admin only (CONTRACT "Common"); never metered. */
export const branchOp = (id: string, contract: BranchContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: BRANCHES_TAG, errors: contract.body === undefined ? READ_ERRORS : WRITE_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

/** Reason codes of the branch bodies' 422s: a name that is not a branch name is `Branch.InvalidName` wherever it is. */
const BRANCH_REASONS = { prefix: 'Branch', fields: { name: 'Branch.InvalidName', base: 'Branch.InvalidName', requireProposal: 'Branch.InvalidProtection', requiredApprovals: 'Branch.InvalidProtection' } };
const LIST = 'List the project\'s branches (`main` included)';
const CREATE = 'Create a branch: base\'s schema and a copy of its rows (same ids), in one transaction';
const BY_NAME = { name: { description: 'Branch name.' } };
const BY_ID = { id: { description: 'Branch id (a value that is not a UUID is taken as the name).' } };

export const runBranch = (ctx: OperationContext, cmd: BranchCommand): Promise<BranchCommandResult> => ctx.services.control.branchCommand(ctx.scope!.project.id, cmd);

const branchOf = (res: BranchCommandResult): BranchRecord => {
  if (res.kind !== 'branch') throw new Error(`unexpected branch command result ${res.kind}`);
  return res.branch;
};

const create = branchOp('ControlPlane.Branch.Create', {
  summary: CREATE,
  description: 'The copy is physical: its time is linear in base\'s rows (docs/branches.md, "Benchmark"). Reads and writes on base are not blocked meanwhile.',
  routes: [{ method: 'POST', path: 'branches' }, { method: 'POST', path: 'Branch/branches', summary: `${CREATE} (same as \`POST /branches\`)` }],
  body: S.ControlBranchInput, reasons: BRANCH_REASONS,
  output: { status: 201, body: S.ControlBranchSingle },
}, async (ctx) => {
  const b = ctx.inv.body as { name: string; base?: string | null };
  const res = await runBranch(ctx, { kind: 'create', name: b.name, base: b.base ?? 'main', correlationId: ctx.inv.correlationId });
  return control(ctx, 'Branch', 'created', branchOf(res), 201);
});

const list = branchOp('ControlPlane.Branch.List', {
  summary: LIST,
  routes: [{ method: 'GET', path: 'branches' }, { method: 'GET', path: 'Branch/branches', summary: `${LIST} (same as \`GET /branches\`)` }],
  output: { status: 200, body: S.ControlBranchList },
}, async (ctx) => control(ctx, 'Branch', 'listed', await listBranches(ctx.services.db, ctx.scope!.project.id)));

const readBy = (id: string, contract: BranchContract, refOf: (ctx: OperationContext) => BranchRef): DeclaredSpec => branchOp(id, contract, async (ctx) => {
  const b = await requireBranch(ctx.services.db, ctx.scope!.project.id, refOf(ctx));
  return control(ctx, 'Branch', 'read', b.record);
});

const pathRef = (ctx: OperationContext): BranchRef => refOfPathId(ctx.inv.params.id ?? '');
const nameRef = (ctx: OperationContext): BranchRef => ({ name: ctx.inv.params.name ?? '' });

const deleteBy = (id: string, contract: BranchContract, refOf: (ctx: OperationContext) => BranchRef): DeclaredSpec => branchOp(id, contract, async (ctx) => {
  await runBranch(ctx, { kind: 'delete', ref: refOf(ctx) });
  return noContent;
});

const protect = branchOp('ControlPlane.Branch.Protect', {
  summary: 'Set a branch\'s protection (proposal required, approvals required)',
  routes: [{ method: 'PUT', path: 'Branch/branches/:id/protection' }], params: BY_ID,
  body: S.ControlBranchProtectionInput, reasons: BRANCH_REASONS,
  output: { status: 200, body: S.ControlBranchSingle },
}, async (ctx) => {
  const b = ctx.inv.body as { requireProposal: boolean; requiredApprovals?: number };
  const res = await runBranch(ctx, { kind: 'protect', ref: pathRef(ctx), requireProposal: b.requireProposal, requiredApprovals: b.requiredApprovals ?? 0 });
  return control(ctx, 'Branch', 'protected', branchOf(res));
});

/** `/api/branches…` and `/api/Branch/branches…` (CONTRACT "Branches"). */
export const BRANCH_SPECS = {
  create,
  list,
  readByName: readBy('ControlPlane.Branch.ReadByName', {
    summary: 'Read a branch by name', routes: [{ method: 'GET', path: 'branches/:name' }], params: BY_NAME, output: { status: 200, body: S.ControlBranchSingle },
  }, nameRef),
  read: readBy('ControlPlane.Branch.Read', {
    summary: 'Read a branch by id', routes: [{ method: 'GET', path: 'Branch/branches/:id' }], params: BY_ID, output: { status: 200, body: S.ControlBranchSingle },
  }, pathRef),
  deleteByName: deleteBy('ControlPlane.Branch.DeleteByName', {
    summary: 'Delete a branch by name (`main` answers 409 `Branch.Protected`)', routes: [{ method: 'DELETE', path: 'branches/:name' }], params: BY_NAME,
    output: { status: 204 }, errors: [400, 401, 403, 404, 409, 422],
  }, nameRef),
  delete: deleteBy('ControlPlane.Branch.Delete', {
    summary: 'Delete a branch: its name then answers 404 everywhere (`main` answers 409 `Branch.Protected`)', routes: [{ method: 'DELETE', path: 'Branch/branches/:id' }], params: BY_ID,
    output: { status: 204 }, errors: [400, 401, 403, 404, 409, 422],
  }, pathRef),
  protect,
};
