import { ServiceError, notFound } from '../../errors/service-error.js';
import { readProject } from '../../control/project-store.js';
import { control } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { READ_ERRORS, type MeteringDecl, type NamedSchema, type TagDecl } from '../contract/index.js';
import { HEALTH_SCHEMAS as S } from './health-schemas.js';

export const PLATFORM_TAG: TagDecl = { name: 'Platform', description: 'The node itself: liveness, readiness, health and the runtime fabric.' };

/** Probes and node views read no project data, so they count toward no quota (a balancer probes without a project). */
const UNMETERED: MeteringDecl = { unit: 'none', why: 'node probes and views: no project data' };

/** A public probe at `path`: no credential, no scope; `errors` besides `default`. */
const publicOp = (id: string, path: string, summary: string, body: NamedSchema, errors: readonly number[], execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'public', scope: 'none', grants: noGrants, execute,
  contract: { tag: PLATFORM_TAG, summary, routes: [{ method: 'GET', path }], output: { status: 200, body }, errors, metering: UNMETERED, stability: 'stable' },
});

/**
 * The routes are public (a balancer or orchestrator probes them without a
 * credential), so an anonymous caller learns only the status. Node id,
 * topology and load (RSS, requests in flight) help an attacker fingerprint
 * and time a node, so they need the platform admin bearer on the same route.
 * A user token or a bad bearer gets the public answer (public routes ignore
 * a stale credential).
 */
const isAdmin = (ctx: OperationContext): boolean => ctx.actor.kind === 'admin';

/**
 * Liveness says the process answers; readiness says it should get traffic
 * (dependencies reachable, not draining). Health adds membership for the
 * admin. None of them reveals tenant data.
 */
export const HEALTH_SPECS = {
  health: publicOp('Platform.Health', 'health', 'Node health: the status; with the platform admin bearer also the node, its mode and the members', S.PlatformHealth, [], async (ctx) => {
    const node = ctx.services.node;
    const status = node.draining ? 'draining' : 'ok';
    if (!isAdmin(ctx)) return { status: 200, body: { status } };
    const members = await node.members().catch(() => []);
    return {
      status: 200,
      body: { status, nodeId: ctx.services.nodeId, mode: node.mode, members: members.map((m) => ({ nodeId: m.nodeId, updatedAt: m.updatedAt, load: m.load })), correlationId: ctx.inv.correlationId },
    };
  }),
  live: publicOp('Platform.Health.Live', 'health/live', 'Liveness: the process answers', S.PlatformLiveness, [], async (ctx) => ({
    status: 200,
    body: isAdmin(ctx) ? { status: 'live', nodeId: ctx.services.nodeId, correlationId: ctx.inv.correlationId } : { status: 'live' },
  })),
  ready: publicOp('Platform.Health.Ready', 'health/ready', 'Readiness: dependencies reachable and not draining (else 503 `Node.NotReady`, retryable)', S.PlatformReadiness, [503], async (ctx) => {
    const node = ctx.services.node;
    const { ok, checks } = await node.check();
    if (node.draining) checks.node = 'draining';
    if (!ok || node.draining) {
      throw new ServiceError('UNAVAILABLE', 'Node.NotReady', `not ready: ${Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k, v]) => `${k}=${v}`).join(', ')}`, { retryable: true });
    }
    return { status: 200, body: isAdmin(ctx) ? { status: 'ready', nodeId: ctx.services.nodeId, checks, correlationId: ctx.inv.correlationId } : { status: 'ready', checks } };
  }),
  fabric: {
    id: 'RuntimeFabric.Fabric', authn: 'admin', scope: 'none', grants: noGrants,
    contract: {
      tag: PLATFORM_TAG, summary: 'The nodes that serve a project, with their load (platform admin only)',
      routes: [{ method: 'GET', path: 'RuntimeFabric/:projectId/fabric' }], params: { projectId: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } },
      output: { status: 200, body: S.PlatformRuntimeFabric }, errors: READ_ERRORS, metering: UNMETERED, stability: 'stable',
    },
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
  } satisfies DeclaredSpec,
};
