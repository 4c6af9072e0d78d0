import { DEPLOYMENT_SPECS as D } from '../../runtime/operations/control/deployments.js';
import { PROPOSAL_SPECS as P } from '../../runtime/operations/control/proposals.js';
import type { OperationSpec } from '../../runtime/operations/types.js';

type Route = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; spec: OperationSpec };

/** Proposal and deployment routes (docs/proposals-and-deployments.md, CONTRACT "Proposals", "Deployments"). */
export const PROPOSAL_ROUTES: Route[] = [
  { method: 'GET', path: 'proposals', spec: P.list },
  { method: 'POST', path: 'proposals', spec: P.create },
  { method: 'GET', path: 'proposals/:id', spec: P.read },
  { method: 'POST', path: 'proposals/:id/approve', spec: P.approve },
  { method: 'POST', path: 'proposals/:id/merge', spec: P.merge },
  { method: 'POST', path: 'deployments/preview', spec: D.preview },
  { method: 'POST', path: 'deployments', spec: D.create },
  { method: 'GET', path: 'deployments/:id', spec: D.read },
  { method: 'POST', path: 'deployments/:id/rollback', spec: D.rollback },
];
