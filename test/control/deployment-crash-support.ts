/**
 * Shared by the deployment crash suites (deployment-recovery-*.test.ts): Plinth child
 * processes on one data set (PGlite directory or PostgreSQL database), a project whose
 * Customer has two publications, and what production serves on both sides of a ramp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client, type Reply } from '../support/client.js';
import { createTestDatabase, type Backend } from '../support/server.js';
import { expectStatus } from '../support/expect.js';
import { reapPlinthProcesses, startPlinthProcess, type PlinthProcess } from '../support/plinth-process.js';
import { rampBucket } from '../../runtime/deployments/serving.js';
import { controlData } from './support.js';

const V1 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] };
const V2 = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: true }] };

export const served = (r: Reply): number => Number(r.headers.get('x-service-publication-version'));
/** Correlation ids below 10 and at or above 50 (rampBucket): both sides of every ramp used. */
export const LOW = Array.from({ length: 400 }, () => randomUUID()).filter((id) => rampBucket(id) < 10).slice(0, 3);
const HIGH = Array.from({ length: 400 }, () => randomUUID()).filter((id) => rampBucket(id) >= 50).slice(0, 3);

/** The versions production serves across LOW and HIGH: one value when it is not ramping. */
export async function servedBy(c: Client): Promise<number[]> {
  const out = new Set<number>();
  for (const id of [...LOW, ...HIGH]) out.add(served(await c.get('/api/customers', { 'X-Service-Correlation-Id': id })));
  return [...out];
}

export interface CrashData {
  adminToken: string;
  /** Starts `node dist/main.js` on the shared data under `nodeId` (NODE_ID). */
  start(nodeId: string, env?: Record<string, string>): Promise<PlinthProcess>;
  /** Kills what is left and drops the data. */
  cleanup(): Promise<void>;
}

export async function crashData(backend: Backend): Promise<CrashData> {
  const adminToken = `adm-${randomUUID()}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-deploy-crash-'));
  const db = backend === 'postgres' ? await createTestDatabase() : null;
  return {
    adminToken,
    start: (nodeId, env = {}) => startPlinthProcess({ adminToken, nodeId, databaseUrl: db?.url ?? null, env: { ...(db === null ? { DATA_DIR: dataDir } : {}), ...env } }),
    cleanup: async () => {
      await reapPlinthProcesses();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A project whose Customer is at v1, then v2 (main's head, production's), with one row. */
export async function projectWithTwoVersions(url: string, adminToken: string): Promise<{ c: Client; scope: { tenant: string; project: string }; v1: number; v2: number }> {
  const p = await bootstrapProject(url, adminToken);
  await defineEntity(p.client, V1);
  const v1 = controlData(await p.client.get('/api/branches/main'), 200).head.publicationVersion;
  expectStatus(await p.client.put('/api/Schema/entities', V2), 200);
  const v2 = controlData(await p.client.get('/api/branches/main'), 200).head.publicationVersion;
  expectStatus(await p.client.post('/api/customers', { email: 'a@example.com', age: 3 }), 201);
  return { c: p.client, scope: { tenant: p.tenant, project: p.project }, v1, v2 };
}
