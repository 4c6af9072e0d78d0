/**
 * The node's StreamList page queue (runtime/streams/page-queue.ts), alone:
 * on a pool it only bounds pages in flight; paced (PGlite) it runs one page
 * at a time, lets the node's one-shot requests go first for a bounded time,
 * and keeps its place for a pause as long as the page took, while the
 * page's caller gets its rows at once.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { PacedPageQueue, pageQueueFor } from '../../runtime/streams/page-queue.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A page that keeps the thread for `ms`, as a PGlite query does. */
const blockFor = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

it('on a pool: at most `limit` pages at once, no pause between them', async () => {
  const q = pageQueueFor('postgres', 2, () => true);
  let running = 0;
  let most = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 6 }, () => q.run(async () => {
    most = Math.max(most, ++running);
    await sleep(40);
    running--;
  })));
  assert.equal(most, 2);
  // Three rounds of 40 ms; busy() is ignored and nothing pauses (paced, they would take over 440 ms).
  assert.ok(performance.now() - t0 < 300, `took ${(performance.now() - t0).toFixed(0)} ms`);
});

it('paced: one page at a time, the next one only after a pause as long as the page took; the caller is not held', async () => {
  const q = pageQueueFor('pglite', 4, () => false);
  const spans: Array<[number, number]> = [];
  const answered: number[] = [];
  await Promise.all(Array.from({ length: 3 }, () => q.run(async () => {
    const start = performance.now();
    blockFor(60);
    spans.push([start, performance.now()]);
  }).then(() => answered.push(performance.now()))));
  for (let i = 1; i < spans.length; i++) {
    const gap = spans[i]![0] - spans[i - 1]![1];
    assert.ok(gap >= 55, `page ${i} started ${gap.toFixed(1)} ms after the one before ended`);
  }
  // Each caller had its page's result at once, not after the pause.
  for (let i = 0; i < spans.length; i++) assert.ok(answered[i]! - spans[i]![1] < 40, `caller ${i} waited ${(answered[i]! - spans[i]![1]).toFixed(1)} ms`);
});

it('paced: a page lets requests in flight go first, for at most 100 ms', async () => {
  let busy = true;
  const q = new PacedPageQueue(1, true, () => busy);
  const t0 = performance.now();
  setTimeout(() => { busy = false; }, 30);
  let started = 0;
  await q.run(async () => { started = performance.now() - t0; });
  assert.ok(started >= 28 && started < 90, `the page started after ${started.toFixed(0)} ms (requests ended at 30 ms)`);

  // A node that is never idle still gets its pages, after the bounded wait.
  busy = true;
  const t1 = performance.now();
  await q.run(async () => { started = performance.now() - t1; });
  assert.ok(started >= 98 && started < 300, `the page started after ${started.toFixed(0)} ms while requests never ended`);
});
