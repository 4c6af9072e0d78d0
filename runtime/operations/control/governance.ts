import { notFound } from '../../errors/service-error.js';
import { readProject } from '../../control/project-store.js';
import { parseEnvelopeBody } from '../../governance/envelope.js';
import { mergeChain } from '../../governance/merge.js';
import { readChain } from '../../governance/store.js';
import { control } from '../envelopes.js';
import { reauthorizeRealtime } from './reauthorize-realtime.js';
import type { OperationContext } from '../types.js';
import type { TagDecl } from '../contract/index.js';
import { platformAdminOp } from './tenants.js';
import { PROJECT_SCHEMAS as S } from './project-schemas.js';

export const GOVERNANCE_TAG: TagDecl = { name: 'Governance', description: 'Governance envelopes of the project hierarchy: what a project and its descendants may grant (platform admin only).' };

const PROJECT_ID = { projectId: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } };
const POLICY = 'projects/:projectId/governance/inheritance-policy';

async function pathProjectId(ctx: OperationContext): Promise<string> {
  const p = await readProject(ctx.services.db, null, ctx.inv.params.projectId ?? '');
  if (p === null) throw notFound('Project.NotFound', 'project not found');
  return p.id;
}

/** `/api/projects/{projectId}/governance/…` (CONTRACT: Project hierarchy and governance). Admin only. */
export const GOVERNANCE_SPECS = {
  /** PUT inheritance-policy `{ envelope }` → 200: replaces the project's own envelope, through its actor. */
  putPolicy: platformAdminOp('ControlPlane.Governance.PutInheritancePolicy', {
    tag: GOVERNANCE_TAG, summary: 'Replace the project\'s own governance envelope (`{}` removes it); it binds every descendant',
    routes: [{ method: 'PUT', path: POLICY }], params: PROJECT_ID,
    // The schema documents the body; parseEnvelopeBody checks it, with its own Governance.* reason codes (no body: Governance.InvalidBody, as before).
    body: S.ControlGovernancePolicyInput, reasons: { prefix: 'Governance' },
    output: { status: 200, body: S.ControlGovernancePolicy },
  }, async (ctx) => {
    const projectId = await pathProjectId(ctx);
    const envelope = parseEnvelopeBody(ctx.inv.body);
    await ctx.services.control.setGovernanceEnvelope(projectId, envelope);
    // The envelope binds every descendant: their open subscriptions are authorized again under it.
    await reauthorizeRealtime(ctx, projectId, true);
    return control(ctx, 'GovernancePolicy', 'updated', { projectId, envelope });
  }),
  /** GET inheritance-policy → the project's own envelope (`{}` when it has none). */
  getPolicy: platformAdminOp('ControlPlane.Governance.GetInheritancePolicy', {
    tag: GOVERNANCE_TAG, summary: 'The project\'s own governance envelope (`{}` when it has none)', routes: [{ method: 'GET', path: POLICY }], params: PROJECT_ID,
    output: { status: 200, body: S.ControlGovernancePolicy },
  }, async (ctx) => {
    const projectId = await pathProjectId(ctx);
    const own = (await readChain(ctx.services.db, projectId)).find((l) => l.projectId === projectId);
    return control(ctx, 'GovernancePolicy', 'read', { projectId, envelope: own?.envelope ?? {} });
  }),
  /** GET envelope → `{ effective, chain }`, read from storage (not the node cache), so it shows what was stored last. */
  envelope: platformAdminOp('ControlPlane.Governance.Envelope', {
    tag: GOVERNANCE_TAG, summary: 'The project\'s effective envelope and the chain of envelopes it is merged from (as stored last)',
    routes: [{ method: 'GET', path: 'projects/:projectId/governance/envelope' }], params: PROJECT_ID,
    output: { status: 200, body: S.ControlGovernanceEnvelopeView },
  }, async (ctx) => {
    const chain = await readChain(ctx.services.db, await pathProjectId(ctx));
    return control(ctx, 'GovernanceEnvelope', 'read', { effective: mergeChain(chain), chain });
  }),
};
