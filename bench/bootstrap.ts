import { call, expectStatus, type ApiAnswer } from './http-call.js';
import { ENTITY_NAME, ENTITY_PATH, ITEM_FIELDS, SEED_PREFIX, makeItem } from './item-model.js';

/** What the workloads need to talk to one bootstrapped project. */
export interface Fixture {
  tenantSlug: string;
  projectSlug: string;
  projectId: string;
  /** Headers every entity request carries (admin bearer + project scope). */
  headers: Record<string, string>;
  /** Ids of the seeded rows, for point reads. */
  ids: string[];
}

function dataId(what: string, answer: ApiAnswer): string {
  const data = (answer.body as { data?: { id?: unknown } } | undefined)?.data;
  if (typeof data?.id !== 'string') throw new Error(`${what}: no data.id in ${answer.text.slice(0, 500)}`);
  return data.id;
}

/** Create a tenant, a project and the Item entity through the control-plane API. */
export async function bootstrapProject(baseUrl: string, adminToken: string): Promise<Omit<Fixture, 'ids'>> {
  const auth = { authorization: `Bearer ${adminToken}` };
  const suffix = Math.random().toString(36).slice(2, 8);
  const tenantSlug = `bench-${suffix}`;
  const projectSlug = 'bench';

  const tenant = await call('POST', `${baseUrl}/api/TenantRecord`, auth, { slug: tenantSlug, name: 'Bench tenant' });
  expectStatus('create tenant', tenant, 201);

  const project = await call('POST', `${baseUrl}/api/projects/create`, auth, {
    tenant: tenantSlug,
    slug: projectSlug,
    name: 'Bench project',
  });
  expectStatus('create project', project, 201);
  const projectId = dataId('create project', project);

  const headers = { ...auth, 'x-service-tenant': tenantSlug, 'x-service-project': projectSlug };
  const entity = await call('POST', `${baseUrl}/api/Schema/entities`, headers, { entityName: ENTITY_NAME, fields: ITEM_FIELDS });
  expectStatus('create entity', entity, 201);

  return { tenantSlug, projectSlug, projectId, headers };
}

/** Insert `rows` items through the REST API with `concurrency` requests in flight; returns their ids. */
export async function seedItems(
  baseUrl: string,
  headers: Record<string, string>,
  rows: number,
  concurrency: number,
): Promise<string[]> {
  const ids: string[] = new Array<string>(rows);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= rows) return;
      const answer = await call('POST', `${baseUrl}/api/${ENTITY_PATH}`, headers, makeItem(i, SEED_PREFIX));
      expectStatus(`seed row ${i}`, answer, 201);
      ids[i] = dataId(`seed row ${i}`, answer);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, rows) }, worker));
  return ids;
}
