import { notFound } from '../../errors/service-error.js';
import { readProject } from '../../control/project-store.js';
import { parseEnvelopeBody } from '../../governance/envelope.js';
import { mergeChain } from '../../governance/merge.js';
import { readChain } from '../../governance/store.js';
import { control } from '../envelopes.js';
import { reauthorizeRealtime } from './reauthorize-realtime.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';

const admin = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'none', grants: noGrants, execute });

async function pathProjectId(ctx: OperationContext): Promise<string> {
  const p = await readProject(ctx.services.db, null, ctx.inv.params.projectId ?? '');
  if (p === null) throw notFound('Project.NotFound', 'project not found');
  return p.id;
}

/** `/api/projects/{projectId}/governance/…` (CONTRACT: Project hierarchy and governance). Admin only. */
export const GOVERNANCE_SPECS = {
  /** PUT inheritance-policy `{ envelope }` → 200: replaces the project's own envelope, through its actor. */
  putPolicy: admin('ControlPlane.Governance.PutInheritancePolicy', async (ctx) => {
    const projectId = await pathProjectId(ctx);
    const envelope = parseEnvelopeBody(ctx.inv.body);
    await ctx.services.control.setGovernanceEnvelope(projectId, envelope);
    // The envelope binds every descendant: their open subscriptions are authorized again under it.
    await reauthorizeRealtime(ctx, projectId, true);
    return control(ctx, 'GovernancePolicy', 'updated', { projectId, envelope });
  }),
  /** GET inheritance-policy → the project's own envelope (`{}` when it has none). */
  getPolicy: admin('ControlPlane.Governance.GetInheritancePolicy', async (ctx) => {
    const projectId = await pathProjectId(ctx);
    const own = (await readChain(ctx.services.db, projectId)).find((l) => l.projectId === projectId);
    return control(ctx, 'GovernancePolicy', 'read', { projectId, envelope: own?.envelope ?? {} });
  }),
  /** GET envelope → `{ effective, chain }`, read from storage (not the node cache), so it shows what was stored last. */
  envelope: admin('ControlPlane.Governance.Envelope', async (ctx) => {
    const chain = await readChain(ctx.services.db, await pathProjectId(ctx));
    return control(ctx, 'GovernanceEnvelope', 'read', { effective: mergeChain(chain), chain });
  }),
};
