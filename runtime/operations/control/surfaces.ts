import { notFound, validationFailed } from '../../errors/service-error.js';
import { listSurfaces, readSurface, type SurfaceAction, type SurfaceRecord } from '../../versioning/surface-store.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { readBody } from './body.js';
import { checkId } from './organizations.js';
import { checkFoundationVersion } from './version.js';
import { SLUG } from '../../control/rows.js';

/** Installable surfaces of the scoped project (X-Service-* headers); the Project actor writes them. */
const op = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;

async function requireSurface(ctx: OperationContext): Promise<SurfaceRecord> {
  const s = await readSurface(ctx.services.db, ctx.scope!.project.id, checkId(ctx.inv.params.id, 'Surface'));
  if (s === null) throw notFound('Surface.NotFound', 'surface not found');
  return s;
}

const move = (id: string, action: SurfaceAction, state: string, status = 200): OperationSpec => op(id, async (ctx) => {
  const surfaceId = checkId(ctx.inv.params.id, 'Surface');
  let version: string | undefined;
  if (action === 'upgrade') version = checkFoundationVersion(readBody<{ version: string }>(ctx.inv.body, { version: 'string' }, 'Surface').version, 'version');
  const rec = await ctx.services.control.projectCommand(ctx.scope!.project.id, { kind: 'moveSurface', surfaceId, action, ...(version === undefined ? {} : { version }) });
  return control(ctx, 'Surface', state, rec, status);
});

export const SURFACE_SPECS = {
  list: op('ControlPlane.Surface.List', async (ctx) => control(ctx, 'Surface', 'listed', await listSurfaces(ctx.services.db, ctx.scope!.project.id))),
  read: op('ControlPlane.Surface.Read', async (ctx) => control(ctx, 'Surface', 'read', await requireSurface(ctx))),
  isInstalled: op('ControlPlane.Surface.IsInstalled', async (ctx) => {
    const s = await requireSurface(ctx);
    return control(ctx, 'Surface', 'read', { id: s.id, installed: s.installed, state: s.state });
  }),
  create: op('ControlPlane.Surface.Create', async (ctx) => {
    const b = readBody<{ name: string; kind: string; version: string }>(ctx.inv.body, { name: 'string', kind: 'string', version: 'string' }, 'Surface');
    const name = b.name;
    if (!SLUG.test(name)) throw validationFailed('Surface.InvalidName', 'name must be 1-63 lower-case letters, digits and inner hyphens', 'name');
    if (!KIND.test(b.kind)) throw validationFailed('Surface.InvalidKind', 'kind must match ^[A-Z][A-Za-z0-9]{0,62}$', 'kind');
    const version = checkFoundationVersion(b.version, 'version');
    const rec = await ctx.services.control.projectCommand(ctx.scope!.project.id, { kind: 'createSurface', name, surfaceKind: b.kind, version });
    return control(ctx, 'Surface', 'registered', rec, 201);
  }),
  install: move('ControlPlane.Surface.Install', 'install', 'installed'),
  uninstall: move('ControlPlane.Surface.Uninstall', 'uninstall', 'uninstalled'),
  upgrade: move('ControlPlane.Surface.Upgrade', 'upgrade', 'upgraded'),
  suspend: move('ControlPlane.Surface.Suspend', 'suspend', 'suspended'),
  resume: move('ControlPlane.Surface.Resume', 'resume', 'resumed'),
};
