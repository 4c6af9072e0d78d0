/**
 * What a run cost the database, independent of the machine's load (the
 * WAL and CPU benches: wal-per-create.ts, evidence-per-request.ts).
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

/** CPU ticks (user + system) of the given processes, in ms (USER_HZ = 100). */
export function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // a backend of the previous variant that was still exiting when listed
    }
    const fields = stat.split(') ')[1]!.split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

/**
 * WAL written between two LSNs to relations of `dbName`'s `schemas`, per
 * relation (and per record type with `byRecord`): pg_walinspect's records,
 * attributed by their block reference, so other databases' traffic on a
 * shared server is left out (commit records carry none and are left out too).
 */
export async function walByRelation(
  admin: pg.Client, dbName: string, lsn0: string, lsn1: string, byRecord: boolean, schemas: readonly string[],
): Promise<{ by: Map<string, { n: number; bytes: number }>; total: number }> {
  // pg_walinspect reads only flushed WAL; the WAL writer flushes within wal_writer_delay.
  while (!(await admin.query<{ ok: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok', [lsn1])).rows[0]!.ok) await new Promise((r) => setTimeout(r, 50));
  const oid = String((await admin.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = $1', [dbName])).rows[0]!.oid);
  const names = new Map((await admin.query<{ f: string; r: string }>(
    `SELECT pg_relation_filenode(c.oid)::text AS f, n.nspname || '.' || c.relname AS r FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY($1::text[])`,
    [schemas],
  )).rows.map((r) => [r.f, r.r]));
  const recs = (await admin.query<{ rm: string; rt: string; len: string; block_ref: string | null }>(
    'SELECT resource_manager AS rm, record_type AS rt, record_length AS len, block_ref FROM pg_get_wal_records_info($1, $2)', [lsn0, lsn1],
  )).rows;
  const by = new Map<string, { n: number; bytes: number }>();
  let total = 0;
  for (const r of recs) {
    const m = /rel \d+\/(\d+)\/(\d+)/.exec(r.block_ref ?? '');
    if (m === null || m[1] !== oid) continue; // other databases' traffic (the machine is shared)
    const key = `${names.get(m[2]!) ?? `rel ${m[2]}`}${byRecord ? ` ${r.rm}/${r.rt}` : ''}`;
    const e = by.get(key) ?? { n: 0, bytes: 0 };
    e.n++;
    e.bytes += Number(r.len);
    by.set(key, e);
    total += Number(r.len);
  }
  return { by, total };
}
