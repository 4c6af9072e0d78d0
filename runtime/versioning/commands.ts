import type { SqlClient } from '../../storage/index.js';
import { approvePlan, createPlan, executePlan, rollbackExecution, writeFoundation } from './foundation-store.js';
import type { BindingStabilitySource } from './stability-cache.js';
import { writeStability, type StabilityRecord } from './stability-store.js';
import { insertSurface, moveSurface, type SurfaceAction } from './surface-store.js';

/**
 * Writes to a project's versioning and surface state, carried out by the
 * Project actor (its single writer). The operations validate the body first;
 * these are the already-checked commands.
 */
export type ProjectCommand =
  | { kind: 'announce'; announcement: Omit<StabilityRecord, 'announcedAt'> }
  | { kind: 'adoptFoundation'; profileName: string; foundationVersion: string }
  | { kind: 'planUpgrade'; profileName?: string; targetVersion: string }
  | { kind: 'approvePlan'; planId: string }
  | { kind: 'executePlan'; planId: string }
  | { kind: 'rollbackExecution'; executionId: string }
  | { kind: 'createSurface'; name: string; surfaceKind: string; version: string }
  | { kind: 'moveSurface'; surfaceId: string; action: SurfaceAction; version?: string };

export interface CommandDeps {
  db: SqlClient;
  stability?: Pick<BindingStabilitySource, 'invalidate'>;
}

export async function runProjectCommand(deps: CommandDeps, projectId: string, cmd: ProjectCommand): Promise<unknown> {
  const db = deps.db;
  switch (cmd.kind) {
    case 'announce': {
      const rec = await writeStability(db, projectId, cmd.announcement);
      // The reply waits until nodes dropped the project's verdicts: the next request sees the new state.
      await deps.stability?.invalidate(projectId);
      return rec;
    }
    case 'adoptFoundation': return writeFoundation(db, projectId, cmd.profileName, cmd.foundationVersion);
    case 'planUpgrade': return createPlan(db, projectId, cmd.profileName, cmd.targetVersion);
    case 'approvePlan': return approvePlan(db, projectId, cmd.planId);
    case 'executePlan': return executePlan(db, projectId, cmd.planId);
    case 'rollbackExecution': return rollbackExecution(db, projectId, cmd.executionId);
    case 'createSurface': return insertSurface(db, projectId, { name: cmd.name, kind: cmd.surfaceKind, version: cmd.version });
    case 'moveSurface': return moveSurface(db, projectId, cmd.surfaceId, cmd.action, cmd.version);
  }
}
