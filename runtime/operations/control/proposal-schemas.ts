/**
 * Schemas of the proposal and deployment operations (CONTRACT "Control plane" → "Proposals",
 * "Deployments"; docs/proposals-and-deployments.md), referred to by their contracts in
 * proposals.ts and deployments.ts.
 */
import { schemaRef, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { at, branchName, controlEnvelope, controlList, controlSingle, str, version } from './control-schemas.js';

const DEPLOYMENT_STATES = ['pending', 'ramping', 'baking', 'succeeded', 'failed', 'rolledBack'];

export const PROPOSAL_SCHEMAS = defineSchemas({
  ControlProposalInput: {
    type: 'object', required: ['title', 'base', 'head'], additionalProperties: false,
    properties: {
      // `\S`: a title of blanks only is refused like a missing one.
      title: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' },
      base: branchName('Branch to merge into.'),
      head: branchName('Branch whose schema changes are proposed; must differ from `base` (422 `Proposal.SameBranch`).'),
      description: { type: ['string', 'null'], maxLength: 10000 },
    },
  },
  // No `type`: a body that is not an object (or none) was always taken as "no version named", and still is.
  ControlProposalApproveInput: {
    description: 'Optional. `headPublicationVersion`: the head publication the approver reviewed; when head has moved since, 409 `Proposal.HeadMoved`.',
    properties: { headPublicationVersion: { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER } },
  },
  ControlProposal: {
    type: 'object', required: ['id', 'title', 'base', 'head', 'description', 'state', 'createdAt'],
    properties: {
      id: uuidSchema(), title: str(), base: branchName(), head: branchName(), description: { type: ['string', 'null'] },
      state: { type: 'string', enum: ['open', 'merged'] }, createdAt: at(),
      publicationVersion: version('Set once merged: the base publication the merge made.'),
    },
  },
  ControlProposalDetail: {
    allOf: [schemaRef('ControlProposal'), {
      type: 'object', required: ['diff', 'validation', 'approvals'],
      description: '`diff` and `validation` are computed afresh against base\'s current head on every read.',
      properties: {
        diff: { type: 'array', items: schemaRef('ControlDiffEntry'), description: 'Head\'s schema against base\'s current head, one entry per differing entity (empty once merged).' },
        validation: schemaRef('ControlProposalValidation'),
        approvals: { type: 'array', items: schemaRef('ControlProposalApproval') },
        baseVersion: version('Base head the analysis used.'),
        headVersion: version('Head publication the analysis used; approvals of another head are not current.'),
      },
    }],
  },
  ControlProposalValidation: {
    type: 'object', required: ['ok', 'problems'],
    properties: {
      ok: { type: 'boolean', description: 'False when the changes would fail on base\'s rows.' },
      problems: {
        type: 'array',
        items: { type: 'object', required: ['entityName', 'reasonCode', 'message'], properties: { entityName: str(), field: str(), reasonCode: str('e.g. `Proposal.NotNullViolation`, `Proposal.UniqueViolation`, `Proposal.EnumViolation`.'), message: str() } },
      },
    },
  },
  ControlProposalApproval: {
    type: 'object', required: ['actor', 'at', 'headPublicationVersion', 'basePublicationVersion', 'current'],
    properties: {
      actor: str('`platform-admin`, `user:<subjectId>`, …'), subjectId: str(), at: at(),
      headPublicationVersion: { type: ['integer', 'null'], minimum: 0, description: 'The head publication approved; null for approvals recorded before approvals named one (they count as void).' },
      basePublicationVersion: { type: ['integer', 'null'], minimum: 0, description: 'The base publication head was diffed against when approved; null for approvals recorded before approvals named one (they count as void).' },
      current: { type: 'boolean', description: 'Whether it counts toward `requiredApprovals`: head is still at `headPublicationVersion`, base still at `basePublicationVersion` (a moved base changes the diff), and the approver still may approve (the admin, or a holder of `branch:<base>:approve`).' },
    },
  },
  ControlProposalSingle: controlSingle('Proposal', 'created', 'ControlProposal'),
  ControlProposalDetailSingle: controlSingle('Proposal', ['read', 'approved'], 'ControlProposalDetail'),
  ControlProposalList: controlList('Proposal', 'ControlProposal'),
  ControlProposalMerged: controlEnvelope('Proposal', 'merged', {
    type: 'object', required: ['id', 'state', 'publicationVersion'],
    properties: { id: uuidSchema(), state: { type: 'string', const: 'merged' }, publicationVersion: version('The one new base publication.') },
  }),
});

const target = schemaRef('ControlDeploymentTarget');

/**
 * `target` in a deployment body: documented here, checked by the handler (deployments.ts
 * `targetOf`). Its 422s name nested fields with their own reason codes (`target.branch` →
 * `Branch.InvalidName`, `target.publicationVersion` → `Deployment.InvalidVersion`) and a missing
 * or non-object target answers `Deployment.InvalidBody` without a field, which the top-level
 * reason map of a contract cannot say; so the schema takes any `target`.
 */
const targetInput = (): Json => ({
  description: 'A `ControlDeploymentTarget`: `{ branch, publicationVersion? }` (required): the branch\'s head, or a publication of that branch\'s history (a positive integer).',
});

/** `production`, or nothing: the only environment (an unknown one answers 422 `Deployment.UnknownEnvironment`). */
const environment = (): Json => ({ type: ['string', 'null'], enum: ['production', null], description: 'Environment; default `production`.' });

export const DEPLOYMENT_SCHEMAS = defineSchemas({
  ControlDeploymentTarget: {
    type: 'object', required: ['branch'], additionalProperties: false,
    properties: { branch: branchName(), publicationVersion: version('A publication of that branch\'s history; default its head.') },
  },
  ControlDeploymentPreviewInput: { type: 'object', additionalProperties: false, properties: { target: targetInput(), environment: environment() } },
  ControlDeploymentPlan: controlEnvelope('Deployment', 'previewed', {
    type: 'object', required: ['plan'],
    properties: {
      plan: {
        type: 'object', required: ['fromVersion', 'toVersion', 'migrations', 'steps'],
        properties: {
          fromVersion: version('What the environment serves now.'), toVersion: version('The target\'s publication.'),
          migrations: { type: 'array', items: schemaRef('ControlDiffEntry'), description: 'From the serving model to the target\'s, in the proposal diff vocabulary.' },
          steps: { type: 'array', minItems: 1, items: {}, description: 'What the deployment will do (`validate`, `switch`, …).' },
        },
      },
    },
  }),
  ControlDeploymentInput: {
    type: 'object', additionalProperties: false,
    properties: {
      target: targetInput(), environment: environment(),
      // Only the outer shape here: the handler checks the steps (ascending, 1..100), so every bad ramp keeps the one field `ramp`.
      ramp: {
        type: ['array', 'object', 'null'], minItems: 1, maxItems: 20,
        description: '1 to 20 ascending percentages (1..100), or `{ "steps": [...] }`; each but the last held at least 1 s. Else 422 `Deployment.InvalidRamp`.',
      },
      bake: { type: ['integer', 'null'], minimum: 0, maximum: 3600, description: 'Seconds in `baking` before `succeeded`; default 0.' },
    },
  },
  ControlDeploymentAccepted: controlEnvelope('Deployment', 'accepted', {
    type: 'object', required: ['id', 'state', 'environment', 'target'],
    properties: { id: uuidSchema(), state: { type: 'string', enum: DEPLOYMENT_STATES }, environment: str(), target },
  }),
  ControlDeployment: {
    type: 'object', required: ['id', 'state', 'environment', 'target', 'servingVersion', 'createdAt'],
    properties: {
      id: uuidSchema(), state: { type: 'string', enum: DEPLOYMENT_STATES }, environment: str(), target, servingVersion: version('What the environment serves now.'),
      createdAt: at(),
    },
  },
  ControlDeploymentRollbackInput: {
    type: 'object', required: ['toVersion'], additionalProperties: false,
    properties: { toVersion: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'A publication that existed; else 404.' } },
  },
  ControlDeploymentSingle: controlSingle('Deployment', ['read', 'rolledBack'], 'ControlDeployment'),
});
