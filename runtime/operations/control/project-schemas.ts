/**
 * Schemas of the tenant, project and governance operations (tenants.ts,
 * projects.ts, governance.ts; CONTRACT "Control plane", "Project hierarchy and
 * governance"). Request bodies reproduce what `readBody` checked: unknown,
 * missing and mistyped properties, strings of at most 200 characters, `null`
 * for an optional property taken as absent. Slugs and states keep their own
 * reason codes (`Tenant.InvalidSlug`, `Project.InvalidState`), so the handlers
 * check those, and the schemas describe them in words only.
 */
import { uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas, ref } from '../contract/index.js';
import { at, controlEnvelope, controlList, controlSingle, str } from './control-schemas.js';

const SLUG_RULE = '1-63 lower-case letters, digits and inner hyphens (`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`); another answers 422 `<Tenant|Project>.InvalidSlug`.';
/** At most 200 characters (NAME_MAX), as readBody allowed. */
const text = (description: string, nullable = false): Json => ({ type: nullable ? ['string', 'null'] : 'string', maxLength: 200, description });
const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** A UUID or null (null: as if absent). `pattern`, not only `format`: ajv's uuid format also takes a `urn:uuid:` prefix. */
const optionalUuid = (description: string): Json => ({ type: ['string', 'null'], format: 'uuid', pattern: UUID_PATTERN, description });

const TENANT_STATES = ['active', 'suspended'];
const PROJECT_STATES = ['active', 'suspended', 'archived'];
const GRANT_PATTERN = '^entity:(\\*|[A-Z][A-Za-z0-9]{0,62}):(read|insert|update|delete|\\*)$';
const patterns = (description: string): Json => ({ type: 'array', items: { type: 'string', pattern: GRANT_PATTERN }, description });

export const PROJECT_SCHEMAS = defineSchemas({
  ControlTenant: {
    type: 'object', required: ['id', 'slug', 'name', 'state', 'createdAt', 'updatedAt'],
    properties: { id: uuidSchema(), slug: str(), name: str(), state: { type: 'string', enum: TENANT_STATES }, createdAt: at(), updatedAt: at() },
  },
  ControlTenantInput: {
    type: 'object', required: ['slug', 'name'], additionalProperties: false,
    properties: { slug: text(`Unique on the platform (taken → 409). ${SLUG_RULE}`), name: text('Display name.') },
  },
  ControlTenantUpdate: {
    type: 'object', additionalProperties: false,
    properties: {
      name: text('Display name; absent or null keeps it.', true),
      state: text(`One of ${TENANT_STATES.join(', ')} (another, null included, answers 422 \`Tenant.InvalidState\`); absent keeps it.`, true),
    },
  },
  ControlTenantSingle: controlSingle('TenantRecord', ['created', 'read', 'updated'], 'ControlTenant'),
  ControlTenantList: controlList('TenantRecord', 'ControlTenant'),

  ControlProject: {
    type: 'object', required: ['id', 'tenantId', 'slug', 'name', 'parentProjectId', 'state', 'settings', 'createdAt', 'updatedAt'],
    properties: {
      id: uuidSchema(), tenantId: uuidSchema(), slug: str('Unique in the tenant.'), name: str(),
      parentProjectId: { type: ['string', 'null'], format: 'uuid', description: 'The parent project; null for a root project.' },
      organizationId: { type: ['string', 'null'], format: 'uuid', description: 'The organization the project belongs to, if any.' },
      state: { type: 'string', enum: PROJECT_STATES }, settings: { type: 'object', description: 'The project\'s own settings (JSON, under 64 KiB).' },
      createdAt: at(), updatedAt: at(),
    },
  },
  ControlProjectInput: {
    type: 'object', required: ['tenant', 'slug', 'name'], additionalProperties: false,
    properties: {
      tenant: text('Tenant slug or id (unknown → 404 `Tenant.NotFound`).'),
      slug: text(`Unique in the tenant (taken → 409). ${SLUG_RULE}`),
      name: text('Display name.'),
      parentProjectId: optionalUuid('Create the project under this one (of the same tenant).'),
      organizationId: optionalUuid('Put the project in this organization (of the same tenant).'),
    },
  },
  ControlProjectChildInput: {
    type: 'object', required: ['slug', 'name'], additionalProperties: false,
    properties: { slug: text(`Unique in the tenant (taken → 409). ${SLUG_RULE}`), name: text('Display name.') },
  },
  ControlProjectUpdate: {
    type: 'object', additionalProperties: false,
    properties: {
      name: text('Display name; absent or null keeps it.', true),
      state: text(`One of ${PROJECT_STATES.join(', ')} (another, null included, answers 422 \`Project.InvalidState\`); absent keeps it.`, true),
      settings: { type: ['object', 'null'], description: 'Replaces the project\'s settings; at most 64 KiB as JSON (else 422 `Project.SettingsTooLarge`); absent or null keeps them.' },
      organizationId: optionalUuid('Moves the project into this organization; null takes it out; absent keeps it.'),
    },
  },
  ControlProjectCreated: controlSingle('Project', 'created', 'ControlProject'),
  ControlProjectStateChanged: controlSingle('Project', PROJECT_STATES, 'ControlProject'),
  ControlProjectResolved: controlEnvelope('Project', 'resolved', {
    allOf: [ref('ControlProject')],
    type: 'object', required: ['tenantSlug'], properties: { tenantSlug: str('The tenant\'s slug.') },
  }),
  ControlProjectRelatives: controlList('Project', 'ControlProject'),
  ControlProjectRecordEntry: controlSingle('ProjectRecord', ['read', 'updated'], 'ControlProject'),
  ControlProjectRecordEntries: controlList('ProjectRecord', 'ControlProject'),

  ControlGovernanceEnvelope: {
    type: 'object', additionalProperties: false,
    description: 'A governance envelope: what a project and its descendants may grant and how they are bounded (CONTRACT: Project hierarchy and governance).',
    properties: {
      deniedGrants: patterns('Grant patterns no grant under the envelope may match.'),
      allowedGrants: patterns('When set, every grant under the envelope must match one of these patterns.'),
      maxPageSize: { type: 'integer', minimum: 1, maximum: 1_000_000_000, description: 'Largest list page under the envelope.' },
      requireStrength: {
        type: 'object', additionalProperties: { type: 'string', enum: ['mfa-totp', 'mfa-webauthn'] },
        description: 'Grant pattern → the step-up strength a call it covers needs.',
      },
      maxQuotas: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 }, description: 'Quota kind → the most a project under the envelope may consume.' },
      maxHandlerLimits: {
        type: 'object', additionalProperties: false,
        properties: { cpuMs: { type: 'integer', minimum: 1 }, wallMs: { type: 'integer', minimum: 1 }, memoryMiB: { type: 'integer', minimum: 1 } },
        description: 'The most a handler under the envelope may ask for per invocation (a larger `limits` at declaration: 422 `Handler.LimitsExceedEnvelope`).',
      },
    },
  },
  /**
   * Annotations only: `parseEnvelopeBody` (runtime/governance/envelope.ts) checks
   * the body with reason codes of its own (`Governance.InvalidEnvelope`,
   * `Governance.InvalidPattern`, …) that a schema's 422s cannot reproduce.
   */
  ControlGovernancePolicyInput: {
    description: '`{ envelope }`, a JSON object with exactly that property: the project\'s own envelope, replacing the one it had (`{}` removes it).',
    properties: { envelope: { description: 'A ControlGovernanceEnvelope; a bad one answers 422 with a `Governance.*` reason naming the field.' } },
  },
  ControlGovernancePolicy: controlEnvelope('GovernancePolicy', ['read', 'updated'], {
    type: 'object', required: ['projectId', 'envelope'],
    properties: { projectId: uuidSchema(), envelope: ref('ControlGovernanceEnvelope') },
  }),
  ControlGovernanceEnvelopeView: controlEnvelope('GovernanceEnvelope', 'read', {
    type: 'object', required: ['effective', 'chain'],
    properties: {
      effective: { ...ref('ControlGovernanceEnvelope'), description: 'The chain merged fail-closed: what applies to the project.' },
      chain: {
        type: 'array', description: 'The envelopes of the project and its ancestors, nearest first (those that have one).',
        items: { type: 'object', required: ['projectId', 'envelope'], properties: { projectId: uuidSchema(), envelope: ref('ControlGovernanceEnvelope') } },
      },
    },
  }),
});
