/**
 * MCP resources, templates, prompts and completion with the official SDK
 * client (CONTRACT: MCP): the readable entities' schemas, masked fields
 * absent, an unreadable entity -32003, completion of entity names.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { connect, setupProject, userWith, type Project, mcpErrorOf } from './support.js';


forEachBackend('MCP resources and prompts', (backend: Backend) => {
  let server: TestServer;
  let p: Project;
  /** Reads Customer without `secret`; nothing on Order. */
  let masked: string;

  before(async () => {
    server = await startServer({ backend });
    p = await setupProject(server.url, server.adminToken);
    masked = await userWith(p, [{ grant: 'entity:Customer:read', fields: ['email', 'tier'] }]);
  });
  after(async () => {
    await server?.close();
  });

  it('resources/list names the readable entities; resources/read gives the fields and the publication', async () => {
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ['service://schema/entities/Customer', 'service://schema/entities/Order']);
      const read = await client.readResource({ uri: 'service://schema/entities/Order' });
      assert.equal(read.contents.length, 1);
      const c = read.contents[0] as { uri: string; mimeType: string; text: string };
      assert.equal(c.uri, 'service://schema/entities/Order');
      assert.equal(c.mimeType, 'application/json');
      const doc = JSON.parse(c.text);
      assert.equal(doc.entityName, 'Order');
      assert.equal(typeof doc.publicationVersion, 'number');
      assert.deepEqual(doc.fields, [
        { name: 'total', type: 'Decimal', nullable: false },
        { name: 'status', type: 'Enum', nullable: false, values: ['pending', 'paid'] },
        { name: 'note', type: 'String', nullable: true },
        { name: 'customer', type: 'ID', nullable: false, references: 'Customer' },
      ]);
      const customer = JSON.parse(((await client.readResource({ uri: 'service://schema/entities/Customer' })).contents[0] as { text: string }).text);
      assert.deepEqual(customer.fields.map((f: { name: string }) => f.name), ['email', 'tier', 'secret']);
      assert.equal(customer.fields[0].unique, true);
      const templates = await client.listResourceTemplates();
      assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ['service://schema/entities/{entity}']);
      const unknown = await mcpErrorOf(client.readResource({ uri: 'service://schema/entities/Nope' }));
      assert.equal(unknown.code, -32000);
      assert.equal((unknown.data as any).serviceCode, 'NOT_FOUND');
      const badUri = await mcpErrorOf(client.readResource({ uri: 'file:///etc/passwd' }));
      assert.equal(badUri.code, -32602);
    } finally {
      await client.close();
    }
  });

  it('a masked reader sees its readable entity only, without the masked field; the other is -32003', async () => {
    const { client } = await connect(p.endpoint, masked);
    try {
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ['service://schema/entities/Customer']);
      const doc = JSON.parse(((await client.readResource({ uri: 'service://schema/entities/Customer' })).contents[0] as { text: string }).text);
      assert.deepEqual(doc.fields.map((f: { name: string }) => f.name), ['email', 'tier'], 'secret is masked, so absent');
      const denied = await mcpErrorOf(client.readResource({ uri: 'service://schema/entities/Order' }));
      assert.equal(denied.code, -32003);
      assert.equal((denied.data as any).serviceCode, 'ACCESS_DENIED');
      assert.equal((denied.data as any).reasonCode, 'ExposureBinding.RequiredGrantMissing');
      assert.ok((denied.data as any).correlationId);
      const prompt = await mcpErrorOf(client.getPrompt({ name: 'entity.describe', arguments: { entity: 'Order' } }));
      assert.equal(prompt.code, -32003);
      const done = await client.complete({ ref: { type: 'ref/resource', uri: 'service://schema/entities/{entity}' }, argument: { name: 'entity', value: '' } });
      assert.deepEqual(done.completion.values, ['Customer']);
    } finally {
      await client.close();
    }
  });

  it('prompts: entity.describe names the entity and each field; completion gives the readable names with the prefix', async () => {
    const { client } = await connect(p.endpoint, server.adminToken);
    try {
      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.map((x) => [x.name, x.arguments]), [['entity.describe', [{ name: 'entity', description: 'Entity name', required: true }]]]);
      const got = await client.getPrompt({ name: 'entity.describe', arguments: { entity: 'Order' } });
      assert.equal(got.messages.length, 1);
      assert.equal(got.messages[0]!.role, 'user');
      const content = got.messages[0]!.content as { type: string; text: string };
      assert.equal(content.type, 'text');
      for (const word of ['Order', 'total', 'status', 'note', 'customer']) assert.ok(content.text.includes(word), word);
      const missingArg = await mcpErrorOf(client.getPrompt({ name: 'entity.describe', arguments: {} }));
      assert.equal(missingArg.code, -32602);
      const unknownPrompt = await mcpErrorOf(client.getPrompt({ name: 'nope' }));
      assert.equal(unknownPrompt.code, -32602);
      const byTemplate = await client.complete({ ref: { type: 'ref/resource', uri: 'service://schema/entities/{entity}' }, argument: { name: 'entity', value: 'Or' } });
      assert.deepEqual(byTemplate.completion, { values: ['Order'], total: 1, hasMore: false });
      const byPrompt = await client.complete({ ref: { type: 'ref/prompt', name: 'entity.describe' }, argument: { name: 'entity', value: 'C' } });
      assert.deepEqual(byPrompt.completion.values, ['Customer']);
      const none = await client.complete({ ref: { type: 'ref/prompt', name: 'entity.describe' }, argument: { name: 'entity', value: 'Z' } });
      assert.deepEqual(none.completion.values, []);
    } finally {
      await client.close();
    }
  });
});
