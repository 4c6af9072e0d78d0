import { validationFailed } from '../errors/service-error.js';
import type { OperationContext } from '../operations/types.js';

/**
 * Refuses to create a grant (capability grant or API key grant) that exceeds
 * the project's effective envelope: 422 `Governance.EnvelopeExceeded`, before
 * anything is written. Whoever creates it (the admin too) cannot mint what
 * the envelope forbids; stage 3 still refuses grants that predate it.
 */
export async function assertGrantWithinEnvelope(ctx: OperationContext, projectId: string, grants: string | readonly (string | { grant: string })[]): Promise<void> {
  const source = ctx.services.governance;
  if (source === undefined) return;
  const envelope = await source.effective(projectId);
  if (envelope === null) return;
  const list = typeof grants === 'string' ? [grants] : grants.map((g) => (typeof g === 'string' ? g : g.grant));
  list.forEach((g, i) => {
    if (envelope.exceeds(g)) {
      throw validationFailed('Governance.EnvelopeExceeded', `${g} exceeds the project's governance envelope`, typeof grants === 'string' ? 'grant' : `grants[${i}]`);
    }
  });
}
