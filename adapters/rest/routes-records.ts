import { ORGANIZATION_SPECS as O } from '../../runtime/operations/control/organizations.js';
import { ADOPT_TEMPLATE_SPEC, ROOT_PROJECT_SPEC } from '../../runtime/operations/control/records.js';
import type { OperationSpec } from '../../runtime/operations/types.js';

type Route = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; spec: OperationSpec };

/** Records, versioning and discovery routes (docs/versioning-and-records.md), kept apart so routes.ts stays a list. */
export const RECORD_ROUTES: Route[] = [
  { method: 'GET', path: 'OrganizationRecord', spec: O.list },
  { method: 'POST', path: 'OrganizationRecord', spec: O.create },
  { method: 'GET', path: 'OrganizationRecord/:id', spec: O.read },
  { method: 'PUT', path: 'OrganizationRecord/:id', spec: O.update },
  { method: 'DELETE', path: 'OrganizationRecord/:id', spec: O.delete },
  { method: 'GET', path: 'ProjectRecord/ByOrganization/:organizationId', spec: O.projects },
  { method: 'POST', path: 'ProjectRecord/:id/adopt-template', spec: ADOPT_TEMPLATE_SPEC },
  { method: 'GET', path: 'root-project/current', spec: ROOT_PROJECT_SPEC },
];
