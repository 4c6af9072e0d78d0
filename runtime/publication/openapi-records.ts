/**
 * Organization records, the project-record routes issue 14 added (by organization, template
 * adoption), the root project of the scoped project (CONTRACT "Control plane" → "Records"),
 * and installable surfaces (`/Surface…`, docs/versioning-and-records.md). Platform admin only.
 * Registered by openapi-control-plane.ts.
 */
import { uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { READ_ERRORS, WRITE_ERRORS, at, controlEnvelope, controlList, controlSingle, pathParam, queryParam, str, version } from './openapi-control-common.js';

export const RECORD_SCHEMA_NAMES = [
  'ControlOrganization', 'ControlOrganizationInput', 'ControlOrganizationUpdate', 'ControlOrganizationSingle', 'ControlOrganizationList',
  'ControlProjectRecord', 'ControlProjectRecordSingle', 'ControlProjectRecordList', 'ControlAdoptTemplateInput', 'ControlTemplateAdopted',
  'ControlSurface', 'ControlSurfaceInput', 'ControlSurfaceUpgradeInput', 'ControlSurfaceSingle', 'ControlSurfaceList', 'ControlSurfaceInstalled',
] as const;

const SLUG = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$';
const SURFACE_STATES = ['registered', 'installed', 'suspended', 'uninstalled'];

export function recordSchemas(): Json {
  return {
    ControlOrganization: {
      type: 'object', required: ['id', 'slug', 'name', 'tenantId'],
      properties: { id: uuidSchema(), slug: str(), name: str(), tenantId: uuidSchema(), createdAt: at(), updatedAt: at() },
    },
    ControlOrganizationInput: {
      type: 'object', required: ['slug', 'name', 'tenant'],
      properties: { slug: { type: 'string', pattern: SLUG, description: 'Unique in the tenant (taken → 409).' }, name: { type: 'string', minLength: 1 }, tenant: str('Tenant slug or id.') },
    },
    ControlOrganizationUpdate: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
    ControlOrganizationSingle: controlSingle('OrganizationRecord', ['created', 'read', 'updated'], 'ControlOrganization'),
    ControlOrganizationList: controlList('OrganizationRecord', 'ControlOrganization'),
    ControlProjectRecord: {
      type: 'object', required: ['id', 'tenantId', 'slug', 'name', 'parentProjectId', 'state', 'createdAt'],
      properties: {
        id: uuidSchema(), tenantId: uuidSchema(), slug: str(), name: str(), parentProjectId: { type: ['string', 'null'], format: 'uuid' },
        organizationId: { type: ['string', 'null'], format: 'uuid' }, state: str(), settings: { type: 'object' }, createdAt: at(), updatedAt: at(),
      },
    },
    ControlProjectRecordSingle: controlSingle('ProjectRecord', 'read', 'ControlProjectRecord'),
    ControlProjectRecordList: controlList('ProjectRecord', 'ControlProjectRecord'),
    ControlAdoptTemplateInput: { type: 'object', required: ['templateProjectId'], properties: { templateProjectId: uuidSchema() } },
    ControlTemplateAdopted: controlEnvelope('ProjectRecord', 'templateAdopted', {
      type: 'object', required: ['projectId', 'templateProjectId', 'templatePublicationVersion', 'entities', 'publicationVersion'],
      properties: {
        projectId: uuidSchema(), templateProjectId: uuidSchema(), templatePublicationVersion: version(),
        entities: { type: 'array', items: { type: 'string' } }, publicationVersion: version('The target\'s head after the last entity.'),
      },
    }),
    ControlSurface: {
      type: 'object', required: ['id', 'projectId', 'name', 'kind', 'version', 'state', 'installed', 'installedAt', 'createdAt', 'updatedAt'],
      properties: {
        id: uuidSchema(), projectId: uuidSchema(), name: str(), kind: str(), version: str(), state: { type: 'string', enum: SURFACE_STATES },
        installed: { type: 'boolean' }, installedAt: { type: ['string', 'null'], format: 'date-time' }, createdAt: at(), updatedAt: at(),
      },
    },
    ControlSurfaceInput: {
      type: 'object', required: ['name', 'kind', 'version'],
      properties: { name: { type: 'string', pattern: SLUG }, kind: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]{0,62}$' }, version: { type: 'string', pattern: '^[0-9]{1,6}\\.[0-9]{1,6}\\.[0-9]{1,6}$' } },
    },
    ControlSurfaceUpgradeInput: { type: 'object', required: ['version'], properties: { version: { type: 'string', pattern: '^[0-9]{1,6}\\.[0-9]{1,6}\\.[0-9]{1,6}$' } } },
    ControlSurfaceSingle: controlSingle('Surface', ['registered', 'read', 'installed', 'uninstalled', 'upgraded', 'suspended', 'resumed'], 'ControlSurface'),
    ControlSurfaceList: controlList('Surface', 'ControlSurface'),
    ControlSurfaceInstalled: controlEnvelope('Surface', 'read', {
      type: 'object', required: ['id', 'installed', 'state'], properties: { id: uuidSchema(), installed: { type: 'boolean' }, state: { type: 'string', enum: SURFACE_STATES } },
    }),
  };
}

export function recordParameters(): Json {
  return {
    ControlOrganizationId: pathParam('id', 'Organization id.', uuidSchema()),
    ControlByOrganizationId: pathParam('organizationId', 'Organization id.', uuidSchema()),
    ControlProjectRecordId: pathParam('id', 'Project id.', uuidSchema()),
    ControlTenantQuery: queryParam('tenant', 'Only this tenant\'s organizations (slug or id).'),
    ControlSurfaceId: pathParam('id', 'Surface id.', uuidSchema()),
  };
}

const R = 'Records';
const U = 'Surfaces';
const unscoped = (o: Omit<StaticOp, 'tag' | 'auth' | 'unscoped'>): StaticOp => ({ ...o, tag: R, auth: 'admin', unscoped: true });
const surface = (o: Omit<StaticOp, 'tag' | 'auth'>): StaticOp => ({ ...o, tag: U, auth: 'admin' });
const O = '/OrganizationRecord';
const S = '/Surface/{id}';
const MOVE_ERRORS = [400, 401, 403, 404, 409, 422];

export const RECORD_OPS: StaticOp[] = [
  unscoped({ method: 'get', path: O, operationId: 'ControlPlane.OrganizationRecord.List', summary: 'List organizations', params: ['ControlTenantQuery'], status: 200, response: 'ControlOrganizationList', errors: READ_ERRORS }),
  unscoped({ method: 'post', path: O, operationId: 'ControlPlane.OrganizationRecord.Create', summary: 'Create an organization in a tenant', body: 'ControlOrganizationInput', status: 201, response: 'ControlOrganizationSingle', errors: WRITE_ERRORS }),
  unscoped({ method: 'get', path: `${O}/{id}`, operationId: 'ControlPlane.OrganizationRecord.Read', summary: 'Read an organization', params: ['ControlOrganizationId'], status: 200, response: 'ControlOrganizationSingle', errors: READ_ERRORS }),
  unscoped({ method: 'put', path: `${O}/{id}`, operationId: 'ControlPlane.OrganizationRecord.Update', summary: 'Rename an organization', params: ['ControlOrganizationId'], body: 'ControlOrganizationUpdate', status: 200, response: 'ControlOrganizationSingle', errors: WRITE_ERRORS }),
  unscoped({ method: 'delete', path: `${O}/{id}`, operationId: 'ControlPlane.OrganizationRecord.Delete', summary: 'Delete an organization (then 404)', params: ['ControlOrganizationId'], status: 204, errors: [400, 401, 403, 404, 409, 422] }),
  unscoped({ method: 'get', path: '/ProjectRecord/ByOrganization/{organizationId}', operationId: 'ControlPlane.ProjectRecord.ByOrganization', summary: 'Exactly the projects of an organization', params: ['ControlByOrganizationId'], status: 200, response: 'ControlProjectRecordList', errors: READ_ERRORS }),
  unscoped({ method: 'post', path: '/ProjectRecord/{id}/adopt-template', operationId: 'ControlPlane.ProjectRecord.AdoptTemplate', summary: 'Give an empty project the entities of a template project\'s main head', params: ['ControlProjectRecordId'], body: 'ControlAdoptTemplateInput', status: 200, response: 'ControlTemplateAdopted', errors: WRITE_ERRORS }),
  { method: 'get', path: '/root-project/current', operationId: 'ControlPlane.RootProject.Current', tag: R, auth: 'admin', summary: 'The topmost ancestor of the scoped project (itself when it has no parent)', status: 200, response: 'ControlProjectRecordSingle', errors: READ_ERRORS },
  surface({ method: 'get', path: '/Surface', operationId: 'ControlPlane.Surface.List', summary: 'Installable surfaces of the project', status: 200, response: 'ControlSurfaceList', errors: READ_ERRORS }),
  surface({ method: 'post', path: '/Surface', operationId: 'ControlPlane.Surface.Create', summary: 'Register a surface (`registered`)', body: 'ControlSurfaceInput', status: 201, response: 'ControlSurfaceSingle', errors: WRITE_ERRORS }),
  surface({ method: 'get', path: S, operationId: 'ControlPlane.Surface.Read', summary: 'Read a surface', params: ['ControlSurfaceId'], status: 200, response: 'ControlSurfaceSingle', errors: READ_ERRORS }),
  surface({ method: 'get', path: `${S}/is-installed`, operationId: 'ControlPlane.Surface.IsInstalled', summary: 'Whether a surface is installed', params: ['ControlSurfaceId'], status: 200, response: 'ControlSurfaceInstalled', errors: READ_ERRORS }),
  surface({ method: 'post', path: `${S}/install`, operationId: 'ControlPlane.Surface.Install', summary: 'Install a surface', params: ['ControlSurfaceId'], status: 200, response: 'ControlSurfaceSingle', errors: MOVE_ERRORS }),
  surface({ method: 'delete', path: `${S}/uninstall`, operationId: 'ControlPlane.Surface.Uninstall', summary: 'Uninstall a surface', params: ['ControlSurfaceId'], status: 200, response: 'ControlSurfaceSingle', errors: MOVE_ERRORS }),
  surface({ method: 'post', path: `${S}/upgrade`, operationId: 'ControlPlane.Surface.Upgrade', summary: 'Move a surface to another version', params: ['ControlSurfaceId'], body: 'ControlSurfaceUpgradeInput', status: 200, response: 'ControlSurfaceSingle', errors: [...MOVE_ERRORS, 413] }),
  surface({ method: 'post', path: `${S}/suspend`, operationId: 'ControlPlane.Surface.Suspend', summary: 'Suspend an installed surface', params: ['ControlSurfaceId'], status: 200, response: 'ControlSurfaceSingle', errors: MOVE_ERRORS }),
  surface({ method: 'post', path: `${S}/resume`, operationId: 'ControlPlane.Surface.Resume', summary: 'Resume a suspended surface', params: ['ControlSurfaceId'], status: 200, response: 'ControlSurfaceSingle', errors: MOVE_ERRORS }),
];

export const RECORD_TAGS = [
  { name: R, description: 'Organizations, project records by organization, templates, the root project.' },
  { name: U, description: 'Installable surfaces of a project and their lifecycle.' },
];
