import { BRANCH_SPECS as B } from '../../runtime/operations/control/branches.js';
import { SANDBOX_SPECS as SB } from '../../runtime/operations/control/sandboxes.js';
import type { OperationSpec } from '../../runtime/operations/types.js';

type Route = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; spec: OperationSpec };

/** Branch and sandbox routes (docs/branches.md): both route families of CONTRACT "Branches". */
export const BRANCH_ROUTES: Route[] = [
  { method: 'GET', path: 'branches', spec: B.list },
  { method: 'POST', path: 'branches', spec: B.create },
  { method: 'GET', path: 'branches/:name', spec: B.readByName },
  { method: 'DELETE', path: 'branches/:name', spec: B.deleteByName },
  { method: 'GET', path: 'Branch/branches', spec: B.list },
  { method: 'POST', path: 'Branch/branches', spec: B.create },
  { method: 'GET', path: 'Branch/branches/:id', spec: B.read },
  { method: 'DELETE', path: 'Branch/branches/:id', spec: B.delete },
  { method: 'PUT', path: 'Branch/branches/:id/protection', spec: B.protect },
  { method: 'GET', path: 'sandboxes', spec: SB.list },
  { method: 'POST', path: 'sandboxes', spec: SB.create },
  { method: 'GET', path: 'sandboxes/:id', spec: SB.read },
  { method: 'DELETE', path: 'sandboxes/:id', spec: SB.delete },
];
