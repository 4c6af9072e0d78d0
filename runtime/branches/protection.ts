import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { ServiceError } from '../errors/service-error.js';
import type { SchemaCommand } from '../control/schema-commands.js';

/** Schema commands that change a branch's schema directly (what `requireProposal` forbids); recovery and a running transition's own steps are not. */
export function directChangeBranch(cmd: SchemaCommand): string | null {
  switch (cmd.kind) {
    // A proposal's merge is the one way a protected branch's schema changes.
    case 'migrate': return cmd.migration.kind === 'merge' ? null : cmd.migration.branch;
    case 'rollback':
    case 'transitionExecute':
    case 'transitionRollback':
      return cmd.branch;
    case 'transitionCreate': return cmd.branch;
    default: return null;
  }
}

/**
 * CONTRACT "Branches": with `requireProposal`, every direct schema change of
 * the branch is 403 ACCESS_DENIED `Branch.ProposalRequired`; only a merge
 * changes its schema. Checked by the Project actor before it plans anything.
 */
export async function refuseDirectSchemaChange(db: SqlExecutor, projectId: string, branch: string): Promise<void> {
  const res = await db.query<{ require_proposal: boolean }>(
    `SELECT require_proposal FROM ${PLATFORM_SCHEMA}.branches WHERE project_id = $1 AND name = $2`, [projectId, branch],
  );
  if (res.rows[0]?.require_proposal === true) {
    throw new ServiceError('ACCESS_DENIED', 'Branch.ProposalRequired', `branch '${branch}' requires a proposal: change its schema through a merge`);
  }
}
