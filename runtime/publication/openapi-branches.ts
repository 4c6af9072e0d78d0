/**
 * Branches and sandboxes (CONTRACT "Control plane" → "Branches", "Sandboxes";
 * docs/branches.md): both route families of branches (`/branches…` by name,
 * `/Branch/branches…` by id), platform admin only, project from the scope headers.
 * Registered by openapi-control-plane.ts.
 */
import { schemaRef, uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { READ_ERRORS, WRITE_ERRORS, at, branchName, controlList, controlSingle, int, pathParam, version } from './openapi-control-common.js';

export const BRANCH_SCHEMA_NAMES = [
  'ControlBranch', 'ControlBranchInput', 'ControlBranchProtection', 'ControlBranchSingle', 'ControlBranchList',
  'ControlSandbox', 'ControlSandboxInput', 'ControlSandboxSingle', 'ControlSandboxList',
] as const;

export function branchSchemas(): Json {
  return {
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
      properties: { name: branchName('A taken name answers 409.'), base: branchName('Default `main`; an unknown base answers 404.') },
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
        seedFrom: branchName('Copy this branch\'s rows (default: none).'),
        ttlSeconds: int('Lifetime; default 86400. Deleted within 15 s after `expiresAt`.', 1),
      },
    },
    ControlSandboxSingle: controlSingle('Sandbox', ['created', 'read'], 'ControlSandbox'),
    ControlSandboxList: controlList('Sandbox', 'ControlSandbox'),
  };
}

export function branchParameters(): Json {
  return {
    ControlBranchName: pathParam('name', 'Branch name.', { type: 'string' }),
    ControlBranchId: pathParam('id', 'Branch id (a value that is not a UUID is taken as the name).', { type: 'string' }),
    ControlSandboxId: pathParam('id', 'Sandbox id.', uuidSchema()),
  };
}

const TAG = 'Branches';
const op = (o: Omit<StaticOp, 'tag' | 'auth'>): StaticOp => ({ ...o, tag: TAG, auth: 'admin' });
const LIST = 'List the project\'s branches (`main` included)';
const CREATE = 'Create a branch: base\'s schema and a copy of its rows (same ids), in one transaction';
const CREATE_DESCRIPTION = 'The copy is physical: its time is linear in base\'s rows (docs/branches.md, "Benchmark"). Reads and writes on base are not blocked meanwhile.';

export const BRANCH_OPS: StaticOp[] = [
  op({ method: 'get', path: '/branches', operationId: 'ControlPlane.Branch.List', summary: LIST, status: 200, response: 'ControlBranchList', errors: READ_ERRORS }),
  op({ method: 'post', path: '/branches', operationId: 'ControlPlane.Branch.Create', summary: CREATE, description: CREATE_DESCRIPTION, body: 'ControlBranchInput', status: 201, response: 'ControlBranchSingle', errors: WRITE_ERRORS }),
  op({ method: 'get', path: '/branches/{name}', operationId: 'ControlPlane.Branch.ReadByName', summary: 'Read a branch by name', params: ['ControlBranchName'], status: 200, response: 'ControlBranchSingle', errors: READ_ERRORS }),
  op({ method: 'delete', path: '/branches/{name}', operationId: 'ControlPlane.Branch.DeleteByName', summary: 'Delete a branch by name (`main` answers 409 `Branch.Protected`)', params: ['ControlBranchName'], status: 204, errors: [400, 401, 403, 404, 409, 422] }),
  op({ method: 'get', path: '/Branch/branches', operationId: 'ControlPlane.Branch.ListAlias', summary: `${LIST} (same as \`GET /branches\`)`, status: 200, response: 'ControlBranchList', errors: READ_ERRORS }),
  op({ method: 'post', path: '/Branch/branches', operationId: 'ControlPlane.Branch.CreateAlias', summary: `${CREATE} (same as \`POST /branches\`)`, description: CREATE_DESCRIPTION, body: 'ControlBranchInput', status: 201, response: 'ControlBranchSingle', errors: WRITE_ERRORS }),
  op({ method: 'get', path: '/Branch/branches/{id}', operationId: 'ControlPlane.Branch.Read', summary: 'Read a branch by id', params: ['ControlBranchId'], status: 200, response: 'ControlBranchSingle', errors: READ_ERRORS }),
  op({ method: 'delete', path: '/Branch/branches/{id}', operationId: 'ControlPlane.Branch.Delete', summary: 'Delete a branch: its name then answers 404 everywhere (`main` answers 409 `Branch.Protected`)', params: ['ControlBranchId'], status: 204, errors: [400, 401, 403, 404, 409, 422] }),
  op({ method: 'put', path: '/Branch/branches/{id}/protection', operationId: 'ControlPlane.Branch.Protect', summary: 'Set a branch\'s protection (proposal required, approvals required)', params: ['ControlBranchId'], body: 'ControlBranchProtection', status: 200, response: 'ControlBranchSingle', errors: WRITE_ERRORS }),
  op({ method: 'get', path: '/sandboxes', operationId: 'ControlPlane.Sandbox.List', summary: 'List live sandboxes', status: 200, response: 'ControlSandboxList', errors: READ_ERRORS }),
  op({ method: 'post', path: '/sandboxes', operationId: 'ControlPlane.Sandbox.Create', summary: 'Create an ephemeral branch with a generated name, optionally seeded with a branch\'s rows', body: 'ControlSandboxInput', status: 201, response: 'ControlSandboxSingle', errors: WRITE_ERRORS }),
  op({ method: 'get', path: '/sandboxes/{id}', operationId: 'ControlPlane.Sandbox.Read', summary: 'Read a live sandbox', params: ['ControlSandboxId'], status: 200, response: 'ControlSandboxSingle', errors: READ_ERRORS }),
  op({ method: 'delete', path: '/sandboxes/{id}', operationId: 'ControlPlane.Sandbox.Delete', summary: 'Delete a sandbox and its branch', params: ['ControlSandboxId'], status: 204, errors: READ_ERRORS }),
];

export const BRANCH_TAGS = [{ name: TAG, description: 'Branches and sandboxes of the project (copy-on-create, protection).' }];
