import { validationFailed } from '../../errors/service-error.js';
import type { BranchCommand, BranchCommandResult } from '../../branches/branch-commands.js';
import { listBranches, refOfPathId, requireBranch, type BranchRecord, type BranchRef } from '../../branches/branch-store.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';

/** CONTRACT "Branches": a branch name is also an `X-Service-Branch` value. */
export const BRANCH_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Project-scoped (the scope headers name the project), platform admin only (CONTRACT "Common"). */
const branchOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

export const bodyObject = (body: unknown, block: string): Record<string, unknown> => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw validationFailed(`${block}.InvalidBody`, 'body must be a JSON object');
  return body as Record<string, unknown>;
};

export function refuseUnknown(b: Record<string, unknown>, allowed: string[], block: string): void {
  for (const k of Object.keys(b)) if (!allowed.includes(k)) throw validationFailed(`${block}.UnknownProperty`, `unknown property '${k}'`, k);
}

/** A branch name in a body: a string matching the CONTRACT regex, else 422 naming the field. */
export function checkBranchName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !BRANCH_NAME.test(value)) {
    throw validationFailed('Branch.InvalidName', `'${field}' must match ^[a-z0-9][a-z0-9-]{0,62}$`, field);
  }
  return value;
}

export const runBranch = (ctx: OperationContext, cmd: BranchCommand): Promise<BranchCommandResult> => ctx.services.control.branchCommand(ctx.scope!.project.id, cmd);

const branchOf = (res: BranchCommandResult): BranchRecord => {
  if (res.kind !== 'branch') throw new Error(`unexpected branch command result ${res.kind}`);
  return res.branch;
};

const create = branchOp('ControlPlane.Branch.Create', async (ctx) => {
  const b = bodyObject(ctx.inv.body, 'Branch');
  refuseUnknown(b, ['name', 'base'], 'Branch');
  const name = checkBranchName(b.name, 'name');
  const base = b.base === undefined || b.base === null ? 'main' : checkBranchName(b.base, 'base');
  const res = await runBranch(ctx, { kind: 'create', name, base, correlationId: ctx.inv.correlationId });
  return control(ctx, 'Branch', 'created', branchOf(res), 201);
});

const list = branchOp('ControlPlane.Branch.List', async (ctx) => control(ctx, 'Branch', 'listed', await listBranches(ctx.services.db, ctx.scope!.project.id)));

const readBy = (id: string, refOf: (ctx: OperationContext) => BranchRef): OperationSpec => branchOp(id, async (ctx) => {
  const b = await requireBranch(ctx.services.db, ctx.scope!.project.id, refOf(ctx));
  return control(ctx, 'Branch', 'read', b.record);
});

const pathRef = (ctx: OperationContext): BranchRef => refOfPathId(ctx.inv.params.id ?? '');
const nameRef = (ctx: OperationContext): BranchRef => ({ name: ctx.inv.params.name ?? '' });

const deleteBy = (id: string, refOf: (ctx: OperationContext) => BranchRef): OperationSpec => branchOp(id, async (ctx) => {
  await runBranch(ctx, { kind: 'delete', ref: refOf(ctx) });
  return noContent;
});

const protect = branchOp('ControlPlane.Branch.Protect', async (ctx) => {
  const b = bodyObject(ctx.inv.body, 'Branch');
  refuseUnknown(b, ['requireProposal', 'requiredApprovals'], 'Branch');
  if (typeof b.requireProposal !== 'boolean') throw validationFailed('Branch.InvalidProtection', "'requireProposal' must be a boolean", 'requireProposal');
  const approvals = b.requiredApprovals ?? 0;
  if (typeof approvals !== 'number' || !Number.isInteger(approvals) || approvals < 0 || approvals > 100) {
    throw validationFailed('Branch.InvalidProtection', "'requiredApprovals' must be an integer from 0 to 100", 'requiredApprovals');
  }
  const res = await runBranch(ctx, { kind: 'protect', ref: pathRef(ctx), requireProposal: b.requireProposal, requiredApprovals: approvals });
  return control(ctx, 'Branch', 'protected', branchOf(res));
});

/** `/api/branches…` and `/api/Branch/branches…` (CONTRACT "Branches"). */
export const BRANCH_SPECS = {
  create,
  list,
  readByName: readBy('ControlPlane.Branch.ReadByName', nameRef),
  read: readBy('ControlPlane.Branch.Read', pathRef),
  deleteByName: deleteBy('ControlPlane.Branch.DeleteByName', nameRef),
  delete: deleteBy('ControlPlane.Branch.Delete', pathRef),
  protect,
};
