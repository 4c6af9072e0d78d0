import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '../support/client.js';

const MAIN = fileURLToPath(new URL('../../main.js', import.meta.url));

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Runs `node dist/main.js` as a user would, and waits for its banner. */
function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 60 s:\n${out}`)), 60_000);
    const onData = (): void => {
      const m = /listening on (http:\/\/\S+)[^\n]*\n/.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({ child, url: m[1]!, output: () => out, exited });
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => reject(new Error(`exited ${code} before the banner:\n${out}`)));
  });
}

describe('npm start (the real process)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-proc-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('generates an admin token once (0600), serves, stops cleanly on SIGTERM, and keeps data across restarts', async () => {
    const first = await start({ DATA_DIR: dataDir });
    const tokenPath = join(dataDir, 'admin-token');
    const token = readFileSync(tokenPath, 'utf8').trim();
    assert.equal(statSync(tokenPath).mode & 0o777, 0o600);
    assert.ok(first.output().includes(`Admin token (shown once, stored in ${tokenPath}`), first.output());
    assert.ok(first.output().includes(token));

    const admin = new Client(first.url, { token });
    const t = await admin.post('/api/TenantRecord', { slug: 'proc', name: 'Proc' });
    assert.equal(t.status, 201, t.text);
    const p = await admin.post('/api/projects/create', { tenant: 'proc', slug: 'app', name: 'App' });
    assert.equal(p.status, 201);
    const api = admin.with({ tenant: 'proc', project: 'app' });
    assert.equal((await api.post('/api/Schema/entities', { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: false }] })).status, 201);
    const note = await api.post('/api/notes', { text: 'kept' });
    assert.equal(note.status, 201);

    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0, first.output());

    const second = await start({ DATA_DIR: dataDir });
    try {
      assert.ok(second.output().includes(`Admin token: stored in ${tokenPath}`), second.output());
      assert.ok(!second.output().includes(token), 'the token is printed only when generated');
      const again = new Client(second.url, { token, tenant: 'proc', project: 'app' });
      const read = await again.get(`/api/notes/${note.body.data.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.data.text, 'kept');
      // The outbox was drained on shutdown or on restart: the create's event is in the log.
      const events = await again.get(`/api/events?filter=${encodeURIComponent(JSON.stringify({ correlationId: note.body.meta.correlationId }))}`);
      assert.equal(events.body.data.length, 1);
      assert.equal(events.body.data[0].type, 'entity.Note.created');
    } finally {
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    }
  });

  it('refuses to start with a bad setting and says which one', async () => {
    const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', PORT: 'eighty', DATA_DIR: 'memory:' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 1);
    assert.match(err, /invalid configuration: PORT: expected an integer/);
  });
});
