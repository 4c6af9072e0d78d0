/**
 * Proposals and deployments (CONTRACT "Control plane" → "Proposals", "Deployments";
 * docs/proposals-and-deployments.md). Platform admin only, except `approve`, which a holder
 * of `branch:<base>:approve` may call too. Registered by openapi-control-plane.ts.
 */
import { schemaRef, uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { READ_ERRORS, WRITE_ERRORS, at, branchName, controlEnvelope, controlList, controlSingle, pathParam, str, version } from './openapi-control-common.js';

export const PROPOSAL_SCHEMA_NAMES = [
  'ControlProposalInput', 'ControlProposal', 'ControlProposalDetail', 'ControlProposalValidation', 'ControlProposalApproval',
  'ControlProposalSingle', 'ControlProposalDetailSingle', 'ControlProposalList', 'ControlProposalMerged',
  'ControlDeploymentTarget', 'ControlDeploymentPreviewInput', 'ControlDeploymentPlan', 'ControlDeploymentInput',
  'ControlDeploymentAccepted', 'ControlDeployment', 'ControlDeploymentRollbackInput', 'ControlDeploymentSingle',
] as const;

const DEPLOYMENT_STATES = ['pending', 'ramping', 'baking', 'succeeded', 'failed', 'rolledBack'];
const environment = (): Json => str('Environment; default `production`.');

function proposalSchemas(): Json {
  return {
    ControlProposalInput: {
      type: 'object', required: ['title', 'base', 'head'], additionalProperties: false,
      properties: { title: { type: 'string', minLength: 1, maxLength: 500 }, base: branchName('Branch to merge into.'), head: branchName('Branch whose schema changes are proposed.'), description: { type: ['string', 'null'], maxLength: 10000 } },
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
  };
}

function deploymentSchemas(): Json {
  const target = schemaRef('ControlDeploymentTarget');
  return {
    ControlDeploymentTarget: {
      type: 'object', required: ['branch'], additionalProperties: false,
      properties: { branch: branchName(), publicationVersion: version('A publication of that branch\'s history; default its head.') },
    },
    ControlDeploymentPreviewInput: { type: 'object', required: ['target'], additionalProperties: false, properties: { target, environment: environment() } },
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
      type: 'object', required: ['target'], additionalProperties: false,
      properties: {
        target, environment: environment(),
        ramp: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'integer', minimum: 1, maximum: 100 }, description: 'Ascending percentages; each but the last held at least 1 s.' },
        bake: { type: 'integer', minimum: 0, maximum: 3600, description: 'Seconds in `baking` before `succeeded`; default 0.' },
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
    ControlDeploymentRollbackInput: { type: 'object', required: ['toVersion'], additionalProperties: false, properties: { toVersion: version('A publication that existed; else 404.') } },
    ControlDeploymentSingle: controlSingle('Deployment', ['read', 'rolledBack'], 'ControlDeployment'),
  };
}

export const proposalAndDeploymentSchemas = (): Json => ({ ...proposalSchemas(), ...deploymentSchemas() });

export function proposalParameters(): Json {
  return { ControlProposalId: pathParam('id', 'Proposal id.', { type: 'string' }), ControlDeploymentId: pathParam('id', 'Deployment id.', { type: 'string' }) };
}

const P = 'Proposals';
const D = 'Deployments';

export const PROPOSAL_OPS: StaticOp[] = [
  { method: 'get', path: '/proposals', operationId: 'ControlPlane.Proposal.List', tag: P, auth: 'admin', summary: 'List the project\'s proposals', status: 200, response: 'ControlProposalList', errors: READ_ERRORS },
  { method: 'post', path: '/proposals', operationId: 'ControlPlane.Proposal.Create', tag: P, auth: 'admin', summary: 'Propose merging head\'s schema changes into base', body: 'ControlProposalInput', status: 201, response: 'ControlProposalSingle', errors: WRITE_ERRORS },
  { method: 'get', path: '/proposals/{id}', operationId: 'ControlPlane.Proposal.Read', tag: P, auth: 'admin', summary: 'Read a proposal with its fresh diff, validation against base\'s rows, and approvals', params: ['ControlProposalId'], status: 200, response: 'ControlProposalDetailSingle', errors: READ_ERRORS },
  {
    method: 'post', path: '/proposals/{id}/approve', operationId: 'ControlPlane.Proposal.Approve', tag: P, summary: 'Approve a proposal (admin, or a holder of `branch:<base>:approve`)',
    description: 'Approves head\'s current publication (recorded as the approval\'s `headPublicationVersion`); a later change to head voids it (`current: false`). One approval per actor: approving the same head again answers 200 and adds nothing; approving after head moved replaces the void approval with a fresh one. An optional body `{ "headPublicationVersion": <the head reviewed> }` is refused with 409 `Proposal.HeadMoved` when head is no longer there. Anyone else answers 403 `Proposal.ApproverGrantMissing` with `missingGrants`.',
    params: ['ControlProposalId'], status: 200, response: 'ControlProposalDetailSingle', errors: [400, 401, 403, 404, 409, 422],
  },
  {
    method: 'post', path: '/proposals/{id}/merge', operationId: 'ControlPlane.Proposal.Merge', tag: P, auth: 'admin', summary: 'Merge: head\'s schema changes applied to base as one migration, one publication, one journal entry',
    description: 'Head\'s rows are not merged. Only current approvals count (of head\'s current publication, by an approver who still may approve); the merge applies exactly that head publication. 409 `Proposal.GatesNotMet` with `error.unmetGates` ⊆ `["approvals", "validation"]` and nothing changes; 409 `Proposal.AlreadyMerged`, `Proposal.NothingToMerge`, or `Proposal.BaseMoved` (base moved since the analysis). Adding a nullable field is metadata-only in PostgreSQL: the merge does not rewrite base\'s table (docs/proposals-and-deployments.md, "Benchmark").',
    params: ['ControlProposalId'], status: 200, response: 'ControlProposalMerged', errors: [400, 401, 403, 404, 409, 422],
  },
  { method: 'post', path: '/deployments/preview', operationId: 'ControlPlane.Deployment.Preview', tag: D, auth: 'admin', summary: 'Plan a deployment without changing anything', body: 'ControlDeploymentPreviewInput', status: 200, response: 'ControlDeploymentPlan', errors: WRITE_ERRORS },
  { method: 'post', path: '/deployments', operationId: 'ControlPlane.Deployment.Create', tag: D, auth: 'admin', summary: 'Deploy a branch head or publication to an environment (optionally ramped, then baked)', body: 'ControlDeploymentInput', status: 202, response: 'ControlDeploymentAccepted', errors: WRITE_ERRORS },
  { method: 'get', path: '/deployments/{id}', operationId: 'ControlPlane.Deployment.Read', tag: D, auth: 'admin', summary: 'Read a deployment and the version its environment serves', params: ['ControlDeploymentId'], status: 200, response: 'ControlDeploymentSingle', errors: READ_ERRORS },
  { method: 'post', path: '/deployments/{id}/rollback', operationId: 'ControlPlane.Deployment.Rollback', tag: D, auth: 'admin', summary: 'Roll a deployment back: the environment serves `toVersion`', params: ['ControlDeploymentId'], body: 'ControlDeploymentRollbackInput', status: 202, response: 'ControlDeploymentSingle', errors: WRITE_ERRORS },
];

export const PROPOSAL_TAGS = [
  { name: P, description: 'Schema changes of one branch proposed, approved and merged into another.' },
  { name: D, description: 'Which publication an environment serves; ramps, bakes and rollbacks.' },
];
