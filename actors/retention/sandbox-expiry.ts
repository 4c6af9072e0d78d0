import type { Logger } from '../../runtime/log.js';
import { expiredSandboxes } from '../../runtime/branches/sandbox-store.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { SqlExecutor } from '../../storage/index.js';
import { ActorId } from '../actor-id.js';
import type { ActorMessenger } from '../define.js';
import { PROJECT_KIND } from '../project/index.js';

/** Sandboxes deleted per run; the next timer tick takes the rest. */
const BATCH = 20;

/**
 * Deletes expired sandboxes. The sweeper only finds them: each deletion is the
 * Project actor's (the single writer of branches), so it never races a branch
 * command of the same project.
 */
export async function expireSandboxes(db: SqlExecutor, system: ActorMessenger, log: Logger): Promise<number> {
  let deleted = 0;
  for (const sb of await expiredSandboxes(db, BATCH)) {
    try {
      await system.ask(new ActorId(PROJECT_KIND, sb.projectId), 'branchCommand', { kind: 'deleteSandbox', sandboxId: sb.id }, { timeoutMs: 60_000 });
      deleted++;
    } catch (err) {
      // Gone already (deleted by hand, or its project with it): nothing to do.
      if (ServiceError.is(err) && err.code === 'NOT_FOUND') continue;
      log.warn('sandbox expiry failed', { sandboxId: sb.id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  if (deleted > 0) log.info('sandboxes expired', { deleted });
  return deleted;
}
