/**
 * next-fire.ts against CONTRACT "Scheduling", Triggers: a local time skipped by DST does not
 * fire, a repeated one fires once (Europe/Berlin 2026: 02:00 → 03:00 on 29 March, 03:00 → 02:00
 * on 25 October); 6 fields put seconds first; bad patterns and zones are named problems.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { cronProblem, nextCronFire, nextFire, validTimeZone } from '../../runtime/scheduling/next-fire.js';

const BERLIN = 'Europe/Berlin';

/** The first `n` fires strictly after `after`, each computed from the one before (as the scanner chains them). */
function fires(cron: string, zone: string, after: string, n: number): string[] {
  const out: string[] = [];
  let at = new Date(after);
  for (let i = 0; i < n; i++) {
    const next = nextCronFire(cron, zone, at);
    assert.ok(next !== null, `${cron} stopped firing after ${at.toISOString()}`);
    out.push(next.toISOString());
    at = next;
  }
  return out;
}

it('spring forward: a fixed 02:30 job does not fire on the day 02:30 does not exist', () => {
  assert.deepEqual(fires('30 2 * * *', BERLIN, '2026-03-27T12:00:00Z', 3), [
    '2026-03-28T01:30:00.000Z', // 02:30 CET
    '2026-03-30T00:30:00.000Z', // 29 March has no 02:30; next is 02:30 CEST of the 30th
    '2026-03-31T00:30:00.000Z',
  ]);
});

it('spring forward: an */30 job skips the missing hour', () => {
  assert.deepEqual(fires('*/30 * * * *', BERLIN, '2026-03-28T23:45:00Z', 4), [
    '2026-03-29T00:00:00.000Z', // 01:00 CET
    '2026-03-29T00:30:00.000Z', // 01:30 CET
    '2026-03-29T01:00:00.000Z', // 03:00 CEST: 02:00 and 02:30 do not exist
    '2026-03-29T01:30:00.000Z',
  ]);
});

it('fall back: a fixed 02:30 job fires once on the day 02:30 happens twice', () => {
  assert.deepEqual(fires('30 2 * * *', BERLIN, '2026-10-24T12:00:00Z', 3), [
    '2026-10-25T00:30:00.000Z', // 02:30 CEST, the first pass
    '2026-10-26T01:30:00.000Z', // not 01:30Z (02:30 CET, the second pass) of the 25th
    '2026-10-27T01:30:00.000Z',
  ]);
});

it('fall back: an */30 job does not fire the repeated hour twice', () => {
  assert.deepEqual(fires('*/30 * * * *', BERLIN, '2026-10-24T23:45:00Z', 4), [
    '2026-10-25T00:00:00.000Z', // 02:00 CEST
    '2026-10-25T00:30:00.000Z', // 02:30 CEST
    '2026-10-25T02:00:00.000Z', // 03:00 CET: 02:00 and 02:30 CET repeat wall-clock times already fired
    '2026-10-25T02:30:00.000Z',
  ]);
});

it('a zone without DST and UTC fire every day at the same instant', () => {
  assert.deepEqual(fires('0 9 * * *', 'Asia/Tokyo', '2026-03-28T00:00:00Z', 2), ['2026-03-29T00:00:00.000Z', '2026-03-30T00:00:00.000Z']);
  assert.deepEqual(fires('0 0 1 * *', 'UTC', '2026-01-15T00:00:00Z', 2), ['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
});

it('6 fields put seconds first', () => {
  assert.deepEqual(fires('*/15 * * * * *', 'UTC', '2026-01-01T00:00:07Z', 3), ['2026-01-01T00:00:15.000Z', '2026-01-01T00:00:30.000Z', '2026-01-01T00:00:45.000Z']);
  assert.deepEqual(fires('5 0 12 * * *', 'UTC', '2026-01-01T00:00:00Z', 1), ['2026-01-01T12:00:05.000Z']);
});

it('the next fire is strictly after `after`, also when `after` is a fire time', () => {
  assert.equal(nextCronFire('0 * * * *', 'UTC', new Date('2026-01-01T10:00:00Z'))?.toISOString(), '2026-01-01T11:00:00.000Z');
});

it('interval and once: now + period; `at` until it passed, then none', () => {
  const now = new Date('2026-05-01T00:00:00Z');
  assert.equal(nextFire({ kind: 'interval', intervalSeconds: 90 }, now)?.toISOString(), '2026-05-01T00:01:30.000Z');
  assert.equal(nextFire({ kind: 'once', at: '2026-05-02T00:00:00Z' }, now)?.toISOString(), '2026-05-02T00:00:00.000Z');
  assert.equal(nextFire({ kind: 'once', at: '2026-04-30T00:00:00Z' }, now), null);
  assert.equal(nextFire({ kind: 'event', entity: 'Order', kinds: ['created'] }, now), null);
});

it('names the problem of a bad pattern or zone, and none for a good one', () => {
  assert.equal(cronProblem('0 3 * * *', 'UTC'), null);
  assert.equal(cronProblem('*/10 * * * * *', BERLIN), null);
  assert.match(cronProblem('* * *', 'UTC') ?? '', /5 fields, or 6/);
  assert.match(cronProblem('* * * * * * *', 'UTC') ?? '', /5 fields, or 6/);
  assert.notEqual(cronProblem('61 * * * *', 'UTC'), null);
  assert.notEqual(cronProblem('a b c d e', 'UTC'), null);
  assert.match(cronProblem('0 3 * * *', 'Mars/Olympus') ?? '', /unknown time zone 'Mars\/Olympus'/);
  assert.equal(validTimeZone('America/New_York'), true);
  assert.equal(validTimeZone('Not/AZone'), false);
});
