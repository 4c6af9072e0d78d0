import { ServiceError, notFound } from '../../errors/service-error.js';
import { readProject } from '../../control/project-store.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationSpec } from '../types.js';

const publicOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'public', scope: 'none', grants: noGrants, execute });

/**
 * Liveness says the process answers; readiness says it should get traffic
 * (dependencies reachable, not draining). Health adds membership. None of
 * them needs a credential, and none reveals tenant data.
 */
export const HEALTH_SPECS = {
  health: publicOp('Platform.Health', async (ctx) => {
    const node = ctx.services.node;
    const members = await node.members().catch(() => []);
    return {
      status: 200,
      body: { status: node.draining ? 'draining' : 'ok', nodeId: ctx.services.nodeId, mode: node.mode, members: members.map((m) => ({ nodeId: m.nodeId, updatedAt: m.updatedAt, load: m.load })), correlationId: ctx.inv.correlationId },
    };
  }),
  live: publicOp('Platform.Health.Live', async (ctx) => ({ status: 200, body: { status: 'live', nodeId: ctx.services.nodeId, correlationId: ctx.inv.correlationId } })),
  ready: publicOp('Platform.Health.Ready', async (ctx) => {
    const node = ctx.services.node;
    const { ok, checks } = await node.check();
    if (node.draining) checks.node = 'draining';
    if (!ok || node.draining) {
      throw new ServiceError('UNAVAILABLE', 'Node.NotReady', `not ready: ${Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k, v]) => `${k}=${v}`).join(', ')}`, { retryable: true });
    }
    return { status: 200, body: { status: 'ready', nodeId: ctx.services.nodeId, checks, correlationId: ctx.inv.correlationId } };
  }),
  fabric: {
    id: 'RuntimeFabric.Fabric', authn: 'admin', scope: 'none', grants: noGrants,
    execute: async (ctx) => {
      const project = await readProject(ctx.services.db, null, ctx.inv.params.projectId ?? '');
      if (project === null) throw notFound('Project.NotFound', 'project not found');
      const members = await ctx.services.node.members();
      return control(ctx, 'RuntimeFabric', 'observed', {
        projectId: project.id,
        mode: ctx.services.node.mode,
        servedBy: ctx.services.nodeId,
        // Every node serves every project: data-plane requests run on any node; actors are placed by lease.
        nodes: members,
      });
    },
  } satisfies OperationSpec,
};
