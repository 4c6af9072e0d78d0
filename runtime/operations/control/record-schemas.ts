/**
 * Schemas of the record operations (CONTRACT "Control plane" → "Records"): organizations,
 * the project records issue 14 added (by organization, template adoption), the root project
 * of the scoped project, and installable surfaces (`/Surface…`, docs/versioning-and-records.md).
 * Referred to by the contracts in organizations.ts, records.ts and surfaces.ts.
 */
import { uuidSchema } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { at, controlEnvelope, controlList, controlSingle, str, version } from './control-schemas.js';
import { optionalString, plainBody, plainString } from './plain-body.js';

const SLUG = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$';
const KIND = '^[A-Z][A-Za-z0-9]{0,62}$';
const SEMVER = '^[0-9]{1,6}\\.[0-9]{1,6}\\.[0-9]{1,6}$';
const SURFACE_STATES = ['registered', 'installed', 'suspended', 'uninstalled'];

// Body patterns are described, not declared: the handlers check them with reasons of their own (plain-body.ts).
export const RECORD_SCHEMAS = defineSchemas({
  ControlOrganization: {
    type: 'object', required: ['id', 'slug', 'name', 'tenantId'],
    properties: { id: uuidSchema(), slug: str(), name: str(), tenantId: uuidSchema(), createdAt: at(), updatedAt: at() },
  },
  ControlOrganizationInput: plainBody(['slug', 'name', 'tenant'], {
    slug: plainString(`Unique in the tenant (taken → 409); \`${SLUG}\`, else 422 \`Organization.InvalidSlug\`.`),
    name: plainString('Not blank (else 422 `Organization.InvalidName`).'),
    tenant: plainString('Tenant slug or id.'),
  }),
  ControlOrganizationUpdate: plainBody([], { name: optionalString('The new name, not blank (else 422 `Organization.InvalidName`); absent or null: unchanged.') }),
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
  ControlAdoptTemplateInput: plainBody(['templateProjectId'], { templateProjectId: plainString('A project id (UUID; else 422 `Project.InvalidId`).') }),
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
  ControlSurfaceInput: plainBody(['name', 'kind', 'version'], {
    name: plainString(`\`${SLUG}\` (else 422 \`Surface.InvalidName\`).`),
    kind: plainString(`\`${KIND}\` (else 422 \`Surface.InvalidKind\`).`),
    version: plainString(`\`${SEMVER}\` (else 422 \`Foundation.InvalidVersion\`).`),
  }),
  ControlSurfaceUpgradeInput: plainBody(['version'], { version: plainString(`\`${SEMVER}\` (else 422 \`Foundation.InvalidVersion\`).`) }),
  ControlSurfaceSingle: controlSingle('Surface', ['registered', 'read', 'installed', 'uninstalled', 'upgraded', 'suspended', 'resumed'], 'ControlSurface'),
  ControlSurfaceList: controlList('Surface', 'ControlSurface'),
  ControlSurfaceInstalled: controlEnvelope('Surface', 'read', {
    type: 'object', required: ['id', 'installed', 'state'], properties: { id: uuidSchema(), installed: { type: 'boolean' }, state: { type: 'string', enum: SURFACE_STATES } },
  }),
});
