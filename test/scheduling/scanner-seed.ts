/**
 * TEMPORARY (until the definition and trigger routes are merged): the scanner's
 * tests make their definitions and triggers by SQL on the node's own database
 * client, computing `next_fire_at` as the trigger route does (next-fire.ts).
 * Replace with POST /api/scheduling/taskdefinition and …/triggers.
 */
import { randomUUID } from 'node:crypto';
import { nextFire } from '../../runtime/scheduling/next-fire.js';
import type { MisfirePolicy, OverlapPolicy, TriggerSpec } from '../../runtime/scheduling/types.js';
import type { SqlExecutor } from '../../storage/index.js';

export interface SeedTask {
  tenantId: string;
  projectId: string;
  branch?: string;
  overlap?: OverlapPolicy;
  state?: 'active' | 'paused';
  input?: unknown;
  trigger: TriggerSpec;
  misfire?: MisfirePolicy;
  /** Default: the first fire after now (time triggers), null otherwise. */
  nextFireAt?: Date | null;
}

/** A definition with one trigger; returns both ids. */
export async function seedTask(db: SqlExecutor, s: SeedTask): Promise<{ definitionId: string; triggerId: string }> {
  const definitionId = randomUUID();
  const triggerId = randomUUID();
  await db.query(
    `INSERT INTO plinth.task_definitions (id, tenant_id, project_id, branch, name, handler, input, state, retry, timeout_seconds, overlap)
     VALUES ($1, $2, $3, $4, $5, 'job', $6::jsonb, $7, '{"maxAttempts":3,"backoffSeconds":1,"maxBackoffSeconds":300}'::jsonb, 60, $8)`,
    [definitionId, s.tenantId, s.projectId, s.branch ?? 'main', `task-${definitionId.slice(0, 8)}`, JSON.stringify(s.input ?? null), s.state ?? 'active', s.overlap ?? 'skip'],
  );
  const { kind, ...spec } = s.trigger;
  const next = s.nextFireAt !== undefined ? s.nextFireAt : nextFire(s.trigger, new Date());
  await db.query(
    `INSERT INTO plinth.task_triggers (id, definition_id, project_id, kind, spec, misfire, entity, receiver_id, next_fire_at)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)`,
    [triggerId, definitionId, s.projectId, kind, JSON.stringify(spec), s.misfire ?? 'fireOnce',
      kind === 'event' ? (spec as { entity: string }).entity : null, kind === 'webhook' ? (spec as { receiverId: string }).receiverId : null,
      next === null ? null : next.toISOString()],
  );
  return { definitionId, triggerId };
}
