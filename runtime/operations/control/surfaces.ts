import { notFound, validationFailed } from '../../errors/service-error.js';
import { listSurfaces, readSurface, type SurfaceAction, type SurfaceRecord } from '../../versioning/surface-store.js';
import { control } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import type { TagDecl } from '../contract/index.js';
import { checkId } from './organizations.js';
import { checkFoundationVersion } from './version.js';
import { SLUG } from '../../control/rows.js';
import { familyOp, type FamilyContract } from './records-family-op.js';
import { RECORD_SCHEMAS as RS } from './record-schemas.js';

export const SURFACES_TAG: TagDecl = { name: 'Surfaces', description: 'Installable surfaces of a project and their lifecycle.' };
const surfaceOp = familyOp(SURFACES_TAG);

/** Installable surfaces of the scoped project (X-Service-* headers); the Project actor writes them. */
const op = (id: string, contract: FamilyContract, execute: DeclaredSpec['execute']): DeclaredSpec => surfaceOp(id, { scope: 'project' }, contract, execute);

const BY_ID = { id: { description: 'Surface id.', schema: { type: 'string', format: 'uuid' } } };
const MOVE_ERRORS = [400, 401, 403, 404, 409, 422];

const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;

async function requireSurface(ctx: OperationContext): Promise<SurfaceRecord> {
  const s = await readSurface(ctx.services.db, ctx.scope!.project.id, checkId(ctx.inv.params.id, 'Surface'));
  if (s === null) throw notFound('Surface.NotFound', 'surface not found');
  return s;
}

/** A lifecycle move (`POST /Surface/{id}/<action>`); only an upgrade takes a body, the version to move to. */
const move = (id: string, action: SurfaceAction, state: string, summary: string, method: 'POST' | 'DELETE' = 'POST'): DeclaredSpec => op(id, {
  summary, routes: [{ method, path: `Surface/:id/${action}` }], params: BY_ID,
  ...(action === 'upgrade' ? { body: RS.ControlSurfaceUpgradeInput, reasons: { prefix: 'Surface' }, errors: [...MOVE_ERRORS, 413] } : { errors: MOVE_ERRORS }),
  output: { status: 200, body: RS.ControlSurfaceSingle },
}, async (ctx) => {
  const surfaceId = checkId(ctx.inv.params.id, 'Surface');
  let version: string | undefined;
  if (action === 'upgrade') version = checkFoundationVersion((ctx.inv.body as { version: string }).version, 'version');
  const rec = await ctx.services.control.projectCommand(ctx.scope!.project.id, { kind: 'moveSurface', surfaceId, action, ...(version === undefined ? {} : { version }) });
  return control(ctx, 'Surface', state, rec);
});

export const SURFACE_SPECS = {
  list: op('ControlPlane.Surface.List', {
    summary: 'Installable surfaces of the project', routes: [{ method: 'GET', path: 'Surface' }], output: { status: 200, body: RS.ControlSurfaceList },
  }, async (ctx) => control(ctx, 'Surface', 'listed', await listSurfaces(ctx.services.db, ctx.scope!.project.id))),
  read: op('ControlPlane.Surface.Read', {
    summary: 'Read a surface', routes: [{ method: 'GET', path: 'Surface/:id' }], params: BY_ID, output: { status: 200, body: RS.ControlSurfaceSingle },
  }, async (ctx) => control(ctx, 'Surface', 'read', await requireSurface(ctx))),
  isInstalled: op('ControlPlane.Surface.IsInstalled', {
    summary: 'Whether a surface is installed', routes: [{ method: 'GET', path: 'Surface/:id/is-installed' }], params: BY_ID, output: { status: 200, body: RS.ControlSurfaceInstalled },
  }, async (ctx) => {
    const s = await requireSurface(ctx);
    return control(ctx, 'Surface', 'read', { id: s.id, installed: s.installed, state: s.state });
  }),
  create: op('ControlPlane.Surface.Create', {
    summary: 'Register a surface (`registered`)', routes: [{ method: 'POST', path: 'Surface' }],
    body: RS.ControlSurfaceInput, reasons: { prefix: 'Surface' }, output: { status: 201, body: RS.ControlSurfaceSingle },
  }, async (ctx) => {
    const b = ctx.inv.body as { name: string; kind: string; version: string };
    const name = b.name;
    if (!SLUG.test(name)) throw validationFailed('Surface.InvalidName', 'name must be 1-63 lower-case letters, digits and inner hyphens', 'name');
    if (!KIND.test(b.kind)) throw validationFailed('Surface.InvalidKind', 'kind must match ^[A-Z][A-Za-z0-9]{0,62}$', 'kind');
    const version = checkFoundationVersion(b.version, 'version');
    const rec = await ctx.services.control.projectCommand(ctx.scope!.project.id, { kind: 'createSurface', name, surfaceKind: b.kind, version });
    return control(ctx, 'Surface', 'registered', rec, 201);
  }),
  install: move('ControlPlane.Surface.Install', 'install', 'installed', 'Install a surface'),
  uninstall: move('ControlPlane.Surface.Uninstall', 'uninstall', 'uninstalled', 'Uninstall a surface', 'DELETE'),
  upgrade: move('ControlPlane.Surface.Upgrade', 'upgrade', 'upgraded', 'Move a surface to another version'),
  suspend: move('ControlPlane.Surface.Suspend', 'suspend', 'suspended', 'Suspend an installed surface'),
  resume: move('ControlPlane.Surface.Resume', 'resume', 'resumed', 'Resume a suspended surface'),
};
