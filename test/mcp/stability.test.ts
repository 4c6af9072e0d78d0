/**
 * Binding stability as MCP shows it, over the official SDK client: a Retired
 * tool, resource or prompt is absent from its list (a retired resource or
 * prompt read fails closed, as a retired tool call does); a Deprecated one
 * stays listed with `_meta.service.deprecation` and its results carry it too;
 * tools/list cursors stay stable while tools retire between pages.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { defineEntity, type Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData } from '../control/support.js';
import { connect, mcpErrorOf, setupProject, type Project } from './support.js';

/** Four more entities: with Customer and Order, 30 tools, so tools/list has two pages of 25. */
const EXTRA = ['Alpha', 'Beta', 'Gamma', 'Delta'];

const announce = async (admin: Client, body: Record<string, unknown>): Promise<any> =>
  controlData(await admin.post('/api/version/deprecations/announce', body), 200);

forEachBackend('MCP binding stability', (backend: Backend) => {
  let server: TestServer;
  let p: Project;

  before(async () => {
    server = await startServer({ backend });
    p = await setupProject(server.url, server.adminToken);
    for (const entityName of EXTRA) await defineEntity(p.admin, { entityName, fields: [{ name: 'label', type: 'String', nullable: true }] });
    expectStatus(await p.admin.post('/api/customers', { email: 'a@example.com' }), 201);
  });
  after(async () => {
    await server?.close();
  });

  it('tools/list: a Retired tool is absent, a Deprecated one listed with its deprecation; cursors stay stable across a retirement', async () => {
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const first = await client.listTools();
      assert.equal(first.tools.length, 25);
      assert.ok(first.nextCursor !== undefined);
      const all = [...first.tools.map((t) => t.name), ...(await client.listTools({ cursor: first.nextCursor })).tools.map((t) => t.name)];
      assert.equal(all.length, 30);

      // Between two pages, retire one tool of each page: the second page starts where the first ended and lacks its retired tool.
      const onFirst = first.tools[3]!.name; // Alpha.list (sorted: Alpha, Beta, Customer, Delta, Gamma, Order; 5 verbs each)
      const onSecond = all[27]!;
      assert.ok(onFirst.startsWith('Alpha.') && onSecond.startsWith('Order.'), `${onFirst} ${onSecond}`);
      const bindingOf = (name: string): string => {
        const [entity, verb] = name.split('.');
        const kind = ({ list: 'List', get: 'Read', create: 'Create', update: 'Update', delete: 'Delete' } as Record<string, string>)[verb!];
        return `mcp:Entity.${entity}.${kind}`;
      };
      await announce(p.admin, { bindingId: bindingOf(onFirst), stability: 'Retired' });
      await announce(p.admin, { bindingId: bindingOf(onSecond), stability: 'Retired' });
      const second = await client.listTools({ cursor: first.nextCursor });
      assert.deepEqual(second.tools.map((t) => t.name), all.slice(25).filter((n) => n !== onSecond));
      const fresh = await client.listTools();
      assert.ok(!fresh.tools.some((t) => t.name === onFirst), 'a retired tool is not listed');
      assert.equal(fresh.tools.length, 25, 'the first page fills up from the next tools');
      // Calling it still fails closed (dispatch), with REST's reasonCode.
      const err = await mcpErrorOf(client.callTool({ name: onSecond, arguments: onSecond.endsWith('.list') ? {} : { id: '00000000-0000-4000-8000-000000000000' } }));
      assert.equal((err.data as any).reasonCode, 'ExposureBinding.Retired');

      // Deprecated: listed, with the announcement in _meta.service.deprecation; a call's result carries it too.
      const rec = await announce(p.admin, { bindingId: 'mcp:Entity.Customer.List', replacement: 'https://example.com/v2/customers', sunsetAt: '2031-06-30T12:00:00Z' });
      const listed = [...(await client.listTools()).tools, ...(await client.listTools({ cursor: (await client.listTools()).nextCursor })).tools];
      const dep = listed.find((t) => t.name === 'Customer.list');
      assert.ok(dep !== undefined, 'a deprecated tool stays listed');
      assert.deepEqual((dep._meta as any)?.service?.deprecation, { announcedAt: rec.announcedAt, sunset: '2031-06-30T12:00:00.000Z', link: 'https://example.com/v2/customers' });
      assert.equal(listed.find((t) => t.name === 'Customer.get')!._meta, undefined, 'other tools carry none');
      const called = await client.callTool({ name: 'Customer.list', arguments: {} });
      assert.equal((called.structuredContent as any).data.length, 1, 'a deprecated tool still serves');
      assert.deepEqual((called._meta as any).service.deprecation.link, 'https://example.com/v2/customers');
      const plain = await client.callTool({ name: 'Beta.list', arguments: {} });
      assert.equal((plain._meta as any).service.deprecation, undefined);

      // Stable again: listed again, no deprecation.
      await announce(p.admin, { bindingId: bindingOf(onFirst), stability: 'Stable' });
      await announce(p.admin, { bindingId: 'mcp:Entity.Customer.List', stability: 'Stable' });
      const back = (await client.listTools()).tools;
      assert.ok(back.some((t) => t.name === onFirst));
      assert.equal(back.find((t) => t.name === 'Customer.list')!._meta, undefined);
    } finally {
      await client.close();
    }
  });

  it('resources and prompts: Retired ones are not listed and fail closed when read; Deprecated ones carry their deprecation', async () => {
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      await announce(p.admin, { bindingId: 'mcp:Entity.Gamma.Schema', stability: 'Retired' });
      await announce(p.admin, { bindingId: 'mcp:Entity.Delta.Schema', replacement: 'service://schema/entities/Gamma' });
      const resources = (await client.listResources()).resources;
      assert.deepEqual(resources.map((r) => r.name), ['Alpha', 'Beta', 'Customer', 'Delta', 'Order']);
      assert.equal((resources.find((r) => r.name === 'Delta')!._meta as any).service.deprecation.link, 'service://schema/entities/Gamma');
      const gone = await mcpErrorOf(client.readResource({ uri: 'service://schema/entities/Gamma' }));
      assert.equal((gone.data as any).reasonCode, 'ExposureBinding.Retired');
      assert.equal((gone.data as any).serviceCode, 'NOT_FOUND');
      const delta = await client.readResource({ uri: 'service://schema/entities/Delta' });
      assert.equal((delta._meta as any).service.deprecation.sunset, null);
      const completed = await client.complete({ ref: { type: 'ref/resource', uri: 'service://schema/entities/{entity}' }, argument: { name: 'entity', value: '' } });
      assert.ok(!completed.completion.values.includes('Gamma'), 'completion offers no retired resource');

      await announce(p.admin, { bindingId: 'mcp:Prompt.entity.describe', stability: 'Retired' });
      assert.deepEqual((await client.listPrompts()).prompts, []);
      const refused = await mcpErrorOf(client.getPrompt({ name: 'entity.describe', arguments: { entity: 'Order' } }));
      assert.equal((refused.data as any).reasonCode, 'ExposureBinding.Retired');
      await announce(p.admin, { bindingId: 'mcp:Prompt.entity.describe', replacement: 'service://schema/entities/{entity}' });
      const prompts = (await client.listPrompts()).prompts;
      assert.deepEqual(prompts.map((x) => x.name), ['entity.describe']);
      assert.equal((prompts[0]!._meta as any).service.deprecation.link, 'service://schema/entities/{entity}');
      const got = await client.getPrompt({ name: 'entity.describe', arguments: { entity: 'Order' } });
      assert.equal((got._meta as any).service.deprecation.link, 'service://schema/entities/{entity}');
    } finally {
      await client.close();
    }
  });
});
