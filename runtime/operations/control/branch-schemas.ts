/**
 * Schemas of the branch and sandbox operations (CONTRACT "Control plane" → "Branches",
 * "Sandboxes"; docs/branches.md), referred to by their contracts in branches.ts and sandboxes.ts.
 */
import { schemaRef, uuidSchema } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { at, branchName, controlList, controlSingle, int, version } from './control-schemas.js';

export const BRANCH_SCHEMAS = defineSchemas({
  ControlBranch: {
    type: 'object', required: ['id', 'name', 'base', 'head', 'protection', 'createdAt'],
    properties: {
      id: uuidSchema(),
      name: branchName(),
      base: { type: ['string', 'null'], description: 'The branch it was copied from; null for `main`.' },
      head: { type: 'object', required: ['publicationVersion'], properties: { publicationVersion: version('Head publication; a fresh copy shares its base\'s until its first schema change.') } },
      protection: schemaRef('ControlBranchProtection'),
      createdAt: at(),
    },
  },
  ControlBranchInput: {
    type: 'object', required: ['name'], additionalProperties: false,
    properties: {
      name: branchName('A taken name answers 409.'),
      base: { ...branchName('Default `main`; an unknown base answers 404.'), type: ['string', 'null'] },
    },
  },
  ControlBranchProtectionInput: {
    type: 'object', required: ['requireProposal'], additionalProperties: false,
    properties: {
      requireProposal: { type: 'boolean', description: 'Direct schema changes on the branch answer 403 `Branch.ProposalRequired`; only a merge changes its schema.' },
      requiredApprovals: { type: 'integer', minimum: 0, maximum: 100, description: 'Approvals a proposal into this branch needs before it merges; default 0.' },
    },
  },
  ControlBranchProtection: {
    type: 'object', required: ['requireProposal', 'requiredApprovals'],
    properties: {
      requireProposal: { type: 'boolean', description: 'Direct schema changes on the branch answer 403 `Branch.ProposalRequired`; only a merge changes its schema.' },
      requiredApprovals: int('Approvals a proposal into this branch needs before it merges.'),
    },
  },
  ControlBranchSingle: controlSingle('Branch', ['created', 'read', 'protected'], 'ControlBranch'),
  ControlBranchList: controlList('Branch', 'ControlBranch'),
  ControlSandbox: {
    type: 'object', required: ['id', 'branch', 'sourceBranch', 'seedFrom', 'expiresAt', 'createdAt'],
    properties: {
      id: uuidSchema(),
      branch: branchName('Generated name of the sandbox\'s branch (usable as `X-Service-Branch`).'),
      sourceBranch: branchName('Branch whose head schema the sandbox has.'),
      seedFrom: { type: ['string', 'null'], description: 'Branch the rows were copied from; null: no rows.' },
      expiresAt: at(),
      createdAt: at(),
    },
  },
  ControlSandboxInput: {
    type: 'object', required: ['branch'], additionalProperties: false,
    properties: {
      branch: branchName('Schema source: this branch\'s head.'),
      seedFrom: { ...branchName('Copy this branch\'s rows (default: none).'), type: ['string', 'null'] },
      ttlSeconds: { ...int('Lifetime; default 86400. Deleted within 15 s after `expiresAt`.', 1), maximum: 31_536_000 },
    },
  },
  ControlSandboxSingle: controlSingle('Sandbox', ['created', 'read'], 'ControlSandbox'),
  ControlSandboxList: controlList('Sandbox', 'ControlSandbox'),
});
