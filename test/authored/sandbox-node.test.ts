/**
 * The node runs the sandbox pool: AUTHORED_WORKERS sizes it (default the
 * number of cores, a bad value refused at boot), a started node offers it as
 * Services.authored, and it runs handlers there until the node stops.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { InvalidConfig, parseConfig } from '../../node/config.js';
import { startServer, type TestServer } from '../support/server.js';
import { request } from './sandbox-support.js';

describe('AUTHORED_WORKERS and the node', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('defaults to the number of cores and refuses a bad value at boot', () => {
    assert.equal(parseConfig({}).authoredWorkers, availableParallelism());
    assert.equal(parseConfig({ AUTHORED_WORKERS: '3' }).authoredWorkers, 3);
    assert.throws(() => parseConfig({ AUTHORED_WORKERS: '0' }), (e: unknown) => e instanceof InvalidConfig && /AUTHORED_WORKERS/.test(e.message));
    assert.throws(() => parseConfig({ AUTHORED_WORKERS: 'many' }), InvalidConfig);
  });

  it('a started node runs handlers in its pool (Services.authored)', async () => {
    const pool = server.node.services.authored?.pool;
    assert.ok(pool !== undefined, 'Services.authored is set');
    const o = await pool.invoke(request('export default async (ctx, input) => ({ hello: input, v: ctx.publicationVersion })', { input: 'node' }));
    assert.deepEqual(o.ok && o.value, { hello: 'node', v: 7 });
  });
});
