/** Shared reads of the scanner's tests: runs and trigger-audit decisions through the API, polled with a deadline. */
import assert from 'node:assert/strict';
import type { Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';

/** The control-plane list envelope with its page: `data`. */
async function listed(c: Client, path: string, surface: string): Promise<any[]> {
  const r = await c.get(path);
  expectStatus(r, 200);
  assert.deepEqual(Object.keys(r.body).sort(), ['correlationId', 'data', 'page', 'state', 'surface']);
  assert.equal(r.body.surface, surface);
  assert.equal(r.body.state, 'listed');
  return r.body.data;
}

export const runsOf = (c: Client, definitionId: string): Promise<any[]> => listed(c, `/api/scheduling/taskrun?definitionId=${definitionId}&pageSize=200`, 'TaskRun');

export const decisionsOf = (c: Client, definitionId: string, decision?: string): Promise<any[]> =>
  listed(c, `/api/TriggerAudit/Events?definitionId=${definitionId}&pageSize=200${decision === undefined ? '' : `&decision=${decision}`}`, 'TriggerAudit');

/** Polls `read` every 50 ms until it holds at least `n` items (or `ms` passed) and returns the last answer. */
export async function atLeast(read: () => Promise<any[]>, n: number, ms = 8_000): Promise<any[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const items = await read();
    if (items.length >= n || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
