/**
 * Temporary: task definitions made by SQL until the definition routes are merged
 * (then tests create them with `POST /api/scheduling/taskdefinition`).
 */
import { randomUUID } from 'node:crypto';
import type { TestServer } from '../support/server.js';

export interface SeedDefinition {
  tenantId: string;
  projectId: string;
  handler: string;
  branch?: string;
  input?: unknown;
  retry?: { maxAttempts: number; backoffSeconds: number; maxBackoffSeconds: number };
  timeoutSeconds?: number;
  overlap?: 'skip' | 'queue' | 'allow';
  state?: 'active' | 'paused';
}

export async function seedDefinition(server: TestServer, d: SeedDefinition): Promise<string> {
  const id = randomUUID();
  await server.node.services.db.query(
    `INSERT INTO plinth.task_definitions (id, tenant_id, project_id, branch, name, handler, input, state, retry, timeout_seconds, overlap)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::jsonb, $10, $11)`,
    [id, d.tenantId, d.projectId, d.branch ?? 'main', `def${id.slice(0, 8)}`, d.handler, JSON.stringify(d.input ?? null), d.state ?? 'active',
      JSON.stringify(d.retry ?? { maxAttempts: 3, backoffSeconds: 1, maxBackoffSeconds: 300 }), d.timeoutSeconds ?? 60, d.overlap ?? 'skip'],
  );
  return id;
}
