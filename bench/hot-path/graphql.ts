/**
 * The GraphQL workloads of issue 12, as the same granted user as W1–W3, on the same table:
 * G1 point read by id, G2 the list of 20 filtered by status and sorted by -createdAt
 * (W2's rows, with `totalCount` left out as W2 leaves it out), G3 create. Each is one
 * `POST /graphql` whose document is the same text every time (the per-publication
 * document cache's case); the ids rotate through variables.
 */
import { call, expectStatus as expect } from '../http-call.js';
import type { Fixture } from './fixture.js';
import { CREATED_PREFIX, makeOrder, STATUSES } from './order-model.js';
import type { WrkScript } from './wrk.js';

const COLUMNS = 'id customerName status total qty owner createdAt updatedAt concurrencyToken';
const G1 = `query($id: ID!) { order(id: $id) { ${COLUMNS} } }`;
const G2 = `query($s: OrderStatus) { orders(first: 20, filter: { status: { eq: $s } }, sort: [{ field: CREATED_AT, direction: DESC }]) { edges { node { ${COLUMNS} } } } }`;
const G3 = `mutation($in: OrderCreateInput!) { createOrder(input: $in) { ${COLUMNS} } }`;

export function graphqlScripts(f: Fixture, headers: Record<string, string>, ids: readonly string[]): Record<'G1' | 'G2' | 'G3', WrkScript> {
  const h = { ...headers, 'Content-Type': 'application/json' };
  const post = (bodies: string[]): WrkScript => ({ method: 'POST', paths: ['/graphql'], headers: h, bodies });
  return {
    G1: post(ids.slice(0, 2_000).map((id) => JSON.stringify({ query: G1, variables: { id } }))),
    G2: post(STATUSES.map((s) => JSON.stringify({ query: G2, variables: { s: s.toUpperCase() } }))),
    G3: post(Array.from({ length: 64 }, (_, i) => {
      const o = makeOrder(i, CREATED_PREFIX, f.policyUser?.subjectId);
      return JSON.stringify({ query: G3, variables: { in: { ...o, status: o.status.toUpperCase() } } });
    })),
  };
}

/** One request of each outside wrk: a wrong document must fail the bench, not measure errors fast. */
export async function probeGraphQL(url: string, f: Fixture, bearer: string): Promise<void> {
  const headers = { authorization: `Bearer ${bearer}`, 'x-service-tenant': f.tenantSlug, 'x-service-project': f.projectSlug };
  const one = await call('POST', `${url}/graphql`, headers, { query: G1, variables: { id: f.ids[0] } });
  expect('graphql G1', one, 200);
  const b1 = one.body as { data?: { order?: { id?: string } }; errors?: unknown };
  if (b1.errors !== undefined || b1.data?.order?.id !== f.ids[0]) throw new Error(`probe G1: ${JSON.stringify(one.body).slice(0, 300)}`);
  const list = await call('POST', `${url}/graphql`, headers, { query: G2, variables: { s: 'PAID' } });
  const b2 = list.body as { data?: { orders?: { edges?: Array<{ node: { status: string; createdAt: string } }> } }; errors?: unknown };
  const rows = b2.data?.orders?.edges?.map((e) => e.node) ?? [];
  if (b2.errors !== undefined || rows.length !== 20 || rows.some((r) => r.status !== 'PAID')) throw new Error(`probe G2: ${JSON.stringify(list.body).slice(0, 300)}`);
  for (let i = 1; i < rows.length; i++) if (rows[i]!.createdAt > rows[i - 1]!.createdAt) throw new Error('probe G2: not sorted by -createdAt');
}
