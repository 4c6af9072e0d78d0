/**
 * Route-coverage probe of the families issue 14 parts 6 and 7 touch: every
 * route the spec lists for /api/version, OrganizationRecord, ProjectRecord,
 * root-project, Surface and the discovery routes answers something other
 * than Route.Unknown or Route.MethodNotAllowed, and never a 5xx, under /api and /v1.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, bootstrapProject } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const ID = randomUUID();

/** Method and path tail as the spec's control-plane and discovery tables list them. */
const SPEC_ROUTES: Array<[string, string]> = [
  ['GET', 'version'],
  ['GET', `version/projects/${ID}`],
  ['GET', `version/projects/${ID}/publication/1`],
  ['GET', 'version/platform-baseline'],
  ['GET', 'version/foundations/standard/1.0.0'],
  ['POST', `version/projects/${ID}/foundation/adopt`],
  ['POST', `version/projects/${ID}/upgrade/plan`],
  ['POST', `version/projects/${ID}/upgrade/plans/${ID}/approve`],
  ['POST', `version/projects/${ID}/upgrade/plans/${ID}/execute`],
  ['POST', `version/projects/${ID}/upgrade/executions/${ID}/rollback`],
  ['POST', `version/projects/${ID}/upgrade/preview`],
  ['GET', 'version/deprecations'],
  ['POST', 'version/deprecations/announce'],
  ['GET', 'OrganizationRecord'],
  ['GET', `OrganizationRecord/${ID}`],
  ['POST', 'OrganizationRecord'],
  ['PUT', `OrganizationRecord/${ID}`],
  ['DELETE', `OrganizationRecord/${ID}`],
  ['GET', 'ProjectRecord'],
  ['GET', `ProjectRecord/${ID}`],
  ['POST', 'ProjectRecord'],
  ['PUT', `ProjectRecord/${ID}`],
  ['DELETE', `ProjectRecord/${ID}`],
  ['GET', `ProjectRecord/ByOrganization/${ID}`],
  ['POST', `ProjectRecord/${ID}/adopt-template`],
  ['GET', 'root-project/current'],
  ['GET', 'Surface'],
  ['GET', `Surface/${ID}`],
  ['GET', `Surface/${ID}/is-installed`],
  ['POST', 'Surface'],
  ['POST', `Surface/${ID}/install`],
  ['DELETE', `Surface/${ID}/uninstall`],
  ['POST', `Surface/${ID}/upgrade`],
  ['POST', `Surface/${ID}/suspend`],
  ['POST', `Surface/${ID}/resume`],
  ['GET', 'ContractProjection/descriptor'],
  ['GET', 'ContractProjection/cli'],
  ['GET', 'Introspection/surface'],
  ['GET', 'Platform/admin-surface'],
  ['GET', 'DevBootstrapDescriptor/descriptor'],
  ['GET', 'ExecutionCapabilityMatrix/matrix'],
];

forEachBackend('route coverage: versioning, records, discovery', (backend: Backend) => {
  let server: TestServer;
  let scoped: Client;

  before(async () => {
    server = await startServer({ backend });
    scoped = (await bootstrapProject(server.url, server.adminToken)).client;
  });
  after(async () => {
    await server?.close();
  });

  it(`every one of the ${SPEC_ROUTES.length} spec routes is routed, under /api and /v1`, async () => {
    const unrouted: string[] = [];
    for (const base of ['/api', '/v1']) {
      for (const [method, tail] of SPEC_ROUTES) {
        const r = await scoped.request(method, `${base}/${tail}`, method === 'POST' || method === 'PUT' ? {} : undefined);
        const reason = r.body?.error?.reasonCode;
        assert.ok(r.status < 500, `${method} ${base}/${tail} answered ${r.status}`);
        if (reason === 'Route.Unknown' || reason === 'Route.MethodNotAllowed') unrouted.push(`${method} ${base}/${tail}`);
      }
    }
    assert.deepEqual(unrouted, []);
    // The probe can fail: a route the spec does not list is unknown.
    assert.equal((await scoped.get('/api/version/nothing-here')).body.error.reasonCode, 'Route.Unknown');
  });
});
