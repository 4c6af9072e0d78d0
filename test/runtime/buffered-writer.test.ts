/**
 * BufferedWriter, the one buffer behind the audit and usage writers
 * (ADR 0003, ADR 0006): a flush every 50 ms or at 500 records, statements of
 * 100 (PGlite) or 500 (PostgreSQL) records in order, memory bounded at
 * 50,000 pending records however slow or absent the database is (the oldest
 * go first, and the count is logged), a connection loss kept for a retry,
 * any other failure logged and never thrown, and `flush()` (graceful stop)
 * resolving only once everything recorded before it is written.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { BufferedWriter, BUFFERED_WRITER_LIMITS } from '../../runtime/buffered-writer.js';
import type { Logger } from '../../runtime/log.js';

type Line = { level: 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> | undefined };

function logger(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const log: Logger = {
    info: (msg, fields) => void lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields) => void lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields) => void lines.push({ level: 'error', msg, fields }),
    child: () => log,
  };
  return { log, lines };
}

/** A database stand-in: records each statement's batch; `gate` (when set) holds every write until it resolves. */
function target(): { write(batch: number[]): Promise<void>; statements: number[][]; gate: Promise<void> | null; fail: ((batch: number[]) => Error | null) | null } {
  const t = {
    statements: [] as number[][],
    gate: null as Promise<void> | null,
    fail: null as ((batch: number[]) => Error | null) | null,
    async write(batch: number[]): Promise<void> {
      if (t.gate !== null) await t.gate;
      const err = t.fail?.(batch) ?? null;
      if (err !== null) throw err;
      t.statements.push([...batch]);
    },
  };
  return t;
}

const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
const written = (statements: number[][]): number[] => statements.flat();
const ECONNREFUSED = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

it('writes a flush in statements of 100 records on PGlite and 500 on PostgreSQL, in the order recorded', async () => {
  for (const [backend, size] of [['pglite', 100], ['postgres', 500]] as const) {
    const t = target();
    const w = new BufferedWriter<number>({ backend }, logger().log, { name: 'test', items: 'records', write: (b) => t.write(b) });
    for (const i of range(0, 1234)) w.record(i);
    await w.flush();
    assert.deepEqual(written(t.statements), range(0, 1234), backend);
    assert.ok(t.statements.every((s) => s.length <= size), `${backend}: ${t.statements.map((s) => s.length).join(',')}`);
    assert.equal(t.statements[0]!.length, size, backend);
    assert.deepEqual(w.unflushed(), []);
  }
});

it('flushes on its own: at 500 records at once, and a lone record within the flush period', async () => {
  const t = target();
  const w = new BufferedWriter<number>({ backend: 'postgres' }, logger().log, { name: 'test', items: 'records', write: (b) => t.write(b) });
  for (const i of range(0, 500)) w.record(i);
  // The 500th record started a flush without waiting for the timer: it is written after a few microtasks.
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(written(t.statements), range(0, 500));

  w.record(500);
  assert.deepEqual(w.unflushed(), [500], 'a record waits for the timer, the request path never writes');
  const start = Date.now();
  while (t.statements.length < 2 && Date.now() - start < 5_000) await sleep(5);
  assert.deepEqual(t.statements[1], [500]);
  // 50 ms on an idle machine; the margin is for a loaded one.
  assert.ok(Date.now() - start < 2_000, `written after ${Date.now() - start} ms`);
});

it('keeps memory bounded while the database is slow: the oldest records go first, the count is logged', async () => {
  const t = target();
  let release!: () => void;
  t.gate = new Promise((r) => (release = r));
  const { log, lines } = logger();
  const w = new BufferedWriter<number>({ backend: 'postgres' }, log, { name: 'test', items: 'records', write: (b) => t.write(b) });
  const total = BUFFERED_WRITER_LIMITS.maxPending + 20_000;
  for (const i of range(0, 500)) w.record(i);
  await new Promise((r) => setImmediate(r)); // the 500th record's flush has taken its statement
  for (const i of range(500, total - 500)) w.record(i);
  // The first 500 are in the statement the database holds; the buffer never passes its bound.
  assert.equal(w.unflushed().length, BUFFERED_WRITER_LIMITS.maxPending);
  assert.equal(w.unflushed()[0], total - BUFFERED_WRITER_LIMITS.maxPending);
  release();
  await w.flush();
  const out = written(t.statements);
  assert.deepEqual(out, [...range(0, 500), ...range(total - BUFFERED_WRITER_LIMITS.maxPending, BUFFERED_WRITER_LIMITS.maxPending)]);
  const dropped = lines.filter((l) => l.msg === 'test records dropped under backpressure');
  assert.deepEqual(dropped.map((l) => l.fields?.dropped), [total - 500 - BUFFERED_WRITER_LIMITS.maxPending]);
});

it('keeps records through a connection loss and writes them, in order, once the database is back', async () => {
  const t = target();
  let down = true;
  t.fail = () => (down ? ECONNREFUSED() : null);
  const { log, lines } = logger();
  const w = new BufferedWriter<number>({ backend: 'pglite' }, log, { name: 'test', items: 'records', write: (b) => t.write(b) }, { retryAfterMs: 20 });
  for (const i of range(0, 250)) w.record(i);
  await w.flush();
  assert.equal(w.unflushed().length, 250, 'nothing lost while the database is down');
  assert.ok(lines.some((l) => l.level === 'warn' && l.msg === 'test write deferred: storage connection lost'), JSON.stringify(lines));
  down = false;
  // The retry timer writes them without anyone calling flush().
  const start = Date.now();
  while (w.unflushed().length > 0 && Date.now() - start < 5_000) await sleep(5);
  assert.deepEqual(written(t.statements), range(0, 250));
});

it('bounds the kept records too while the database stays down', async () => {
  const t = target();
  t.fail = () => ECONNREFUSED();
  const { log, lines } = logger();
  const w = new BufferedWriter<number>({ backend: 'pglite' }, log, { name: 'test', items: 'records', write: (b) => t.write(b) }, { maxPending: 300, retryAfterMs: 60_000 });
  for (const i of range(0, 1_000)) w.record(i);
  await w.flush();
  assert.deepEqual(w.unflushed(), range(700, 300), 'the newest 300 are kept');
  assert.ok(lines.some((l) => l.msg === 'test write deferred: storage connection lost'), JSON.stringify(lines));
  t.fail = null;
  await w.flush();
  assert.deepEqual(written(t.statements), range(700, 300));
  assert.deepEqual(lines.filter((l) => l.msg === 'test records dropped under backpressure').map((l) => l.fields?.dropped), [700]);
});

it('logs a failed statement and goes on: flush() never rejects, and later records are written', async () => {
  const t = target();
  t.fail = (batch) => (batch.includes(0) ? new Error('value too long for type character varying(200)') : null);
  const { log, lines } = logger();
  const w = new BufferedWriter<number>({ backend: 'pglite' }, log, { name: 'test', items: 'records', write: (b) => t.write(b) });
  for (const i of range(0, 150)) w.record(i);
  await w.flush();
  assert.deepEqual(written(t.statements), range(100, 50), 'only the failed statement is lost');
  assert.deepEqual(lines.filter((l) => l.level === 'error').map((l) => [l.msg, l.fields?.rows]), [['test write failed', 100]]);
  w.record(150);
  await w.flush();
  assert.deepEqual(written(t.statements), range(100, 51));
});

it('flush() on stop waits for a flush already under way and writes everything recorded before it', async () => {
  const t = target();
  let release!: () => void;
  t.gate = new Promise((r) => (release = r));
  const w = new BufferedWriter<number>({ backend: 'postgres' }, logger().log, { name: 'test', items: 'records', write: (b) => t.write(b) });
  for (const i of range(0, 500)) w.record(i);
  await new Promise((r) => setImmediate(r)); // the 500th record's flush holds all 500 in one statement
  assert.deepEqual(w.unflushed(), [], 'nothing left in the buffer: only the flush under way holds the records');
  let stopped = false;
  const stop = w.flush().then(() => (stopped = true));
  await sleep(20);
  assert.equal(stopped, false, 'the stop waits for the statement the database holds');
  w.record(500); // recorded before the stop's flush ran: written by it
  release();
  await stop;
  assert.deepEqual(written(t.statements), range(0, 501));
  assert.deepEqual(w.unflushed(), []);
});
