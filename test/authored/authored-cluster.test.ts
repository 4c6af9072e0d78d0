/**
 * Authored code in cluster mode (two nodes in this process, NATS, one shared PostgreSQL): a
 * handler published through node A is served by node B, and a re-pin through B is what A runs
 * once its publication cache moves (issue 24 "Done when").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { expectStatus } from '../support/expect.js';
import { startNodesOnNats, type NodesOnNats } from '../support/nats-cluster.js';
import { type TestServer } from '../support/server.js';
import { controlData, projectOnTwoNodes } from '../control/support.js';
import { servicesSkip } from '../support/services.js';
import { invoke, publishHandler } from './publish.js';

async function eventually(what: string, check: () => Promise<boolean>, ms = 8_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('authored code in cluster mode', { skip: servicesSkip('postgres', 'nats') }, () => {
  let cluster: NodesOnNats | undefined;
  let nodes: TestServer[] = [];
  let token = '';
  before(async () => {
    cluster = await startNodesOnNats(['au-a', 'au-b']);
    ({ nodes, token } = cluster);
  });
  after(async () => {
    await cluster?.stop();
  });

  it('published through A, served by B; re-pinned through B, served by A', async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const { onA, onB } = await projectOnTwoNodes(a.url, b.url, token);
    await publishHandler(onA, { name: 'hello', code: 'export default async (ctx, input) => ({ greeting: "hello " + input.who, version: ctx.publicationVersion });' });
    await eventually('B serves hello', async () => (await invoke(onB, 'hello', { who: 'b' })).status === 200);
    const fromB = await invoke(onB, 'hello', { who: 'b' });
    expectStatus(fromB, 200);
    assert.equal(fromB.body.data.greeting, 'hello b');

    const file = controlData(await onB.get('/api/SourceAsset/file/by-path?path=handlers%2Fhello.js'), 200);
    controlData(await onB.put(`/api/SourceAsset/file/${file.id}/content`, { content: 'export default async (ctx, input) => ({ greeting: "hi " + input.who });' }), 200);
    controlData(await onB.put('/api/Schema/handlers/hello', { name: 'hello', surface: 'CoreHandler', source: 'handlers/hello.js', operation: { input: { type: 'object' } } }), 200);
    await eventually('A runs the re-pinned code', async () => (await invoke(onA, 'hello', { who: 'a' })).body?.data?.greeting === 'hi a');
  });
});
