/**
 * The nested to-one workloads of issue 12: `Shipment { order → Order, carrier, state }`,
 * listed 20 at a time filtered by `state`, sorted by `-createdAt`, each row with its order.
 * W4 is the REST list with `include=order`, G4 the same over POST /graphql with
 * `order { … }` selected (the columns REST's include returns). A table of their own, so
 * W1–W3 and the bare baselines read exactly what they read before.
 */
import pg from 'pg';
import { call, expectStatus as expect } from '../http-call.js';
import type { Fixture } from './fixture.js';
import type { WrkScript } from './wrk.js';

export const SHIPMENT_STATES = ['packed', 'sent', 'delivered', 'returned'] as const;
const SHIPMENT = {
  entityName: 'Shipment',
  fields: [
    { name: 'order', type: 'ID', nullable: false, references: 'Order' },
    { name: 'carrier', type: 'String', nullable: false },
    { name: 'state', type: 'Enum', nullable: false, values: [...SHIPMENT_STATES] },
  ],
};
const BATCH = 1000;

const ORDER_COLUMNS = 'id customerName status total qty owner createdAt updatedAt concurrencyToken';
const G4 = `query($s: ShipmentState) { shipments(first: 20, filter: { state: { eq: $s } }, sort: [{ field: CREATED_AT, direction: DESC }]) { edges { node { id carrier state createdAt updatedAt concurrencyToken order { ${ORDER_COLUMNS} } } } } }`;
const restList = (state: string): string =>
  `/api/shipments?filter=${encodeURIComponent(JSON.stringify({ state: { eq: state } }))}&sort=-createdAt&pageSize=20&include=order`;

/** Defines Shipment, seeds `count` shipments of the fixture's orders, and grants the fixture's user `entity:Shipment:read`. */
export async function seedShipments(url: string, f: Fixture, userSubjectId: string, count: number): Promise<void> {
  const admin = { authorization: `Bearer ${f.adminToken}`, ...f.scopeHeaders };
  expect('shipment entity', await call('POST', `${url}/api/Schema/entities`, admin, SHIPMENT), 201);
  for (let start = 0; start < count; start += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => {
      const i = start + k;
      return { order: f.ids[(i * 7) % f.ids.length], carrier: `carrier-${i % 13}`, state: SHIPMENT_STATES[i % SHIPMENT_STATES.length] };
    });
    expect(`shipments at ${start}`, await call('POST', `${url}/api/shipments/batch`, admin, { items }), 201);
  }
  expect('grant Shipment read', await call('POST', `${url}/api/projects/${f.projectId}/capability-grants`, admin, { subjectId: userSubjectId, grant: 'entity:Shipment:read' }), 201);
}

/** Spreads the shipments' `createdAt` one second apart (batches stamp one time) and analyzes the table. */
export async function spreadShipments(databaseUrl: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const t = `"${schema.replace(/"/g, '""')}"."Shipment"`;
    await c.query(`UPDATE ${t} s SET "createdAt" = now() - make_interval(secs => n.n) FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM ${t}) n WHERE s.id = n.id`);
    await c.query(`VACUUM ANALYZE ${t}`);
  } finally {
    await c.end();
  }
}

export function shipmentScripts(headers: Record<string, string>): { W4: WrkScript; G4: WrkScript } {
  return {
    W4: { method: 'GET', paths: SHIPMENT_STATES.map(restList), headers },
    G4: {
      method: 'POST', paths: ['/graphql'], headers: { ...headers, 'Content-Type': 'application/json' },
      bodies: SHIPMENT_STATES.map((s) => JSON.stringify({ query: G4, variables: { s: s.toUpperCase() } })),
    },
  };
}

/** One request of each outside wrk: both must answer 20 rows of the state, newest first, each with its order. */
export async function probeShipments(url: string, f: Fixture, bearer: string): Promise<void> {
  const headers = { authorization: `Bearer ${bearer}`, ...f.scopeHeaders };
  const rest = await call('GET', `${url}${restList('sent')}`, headers);
  expect('W4 probe', rest, 200);
  const rows = (rest.body as { data: Array<{ state: string; order: { id?: string } }> }).data;
  if (rows.length !== 20 || rows.some((r) => r.state !== 'sent' || typeof r.order?.id !== 'string')) throw new Error(`probe W4: ${rest.text.slice(0, 300)}`);
  const g = await call('POST', `${url}/graphql`, headers, { query: G4, variables: { s: 'SENT' } });
  const gb = g.body as { data?: { shipments?: { edges?: Array<{ node: { id: string; state: string; order: { id: string } } }> } }; errors?: unknown };
  const nodes = gb.data?.shipments?.edges?.map((e) => e.node) ?? [];
  if (gb.errors !== undefined || nodes.length !== 20 || nodes.some((n, i) => n.state !== 'SENT' || n.id !== (rows[i] as unknown as { id: string }).id || n.order.id !== rows[i]!.order.id)) {
    throw new Error(`probe G4: ${JSON.stringify(g.body).slice(0, 300)}`);
  }
}
