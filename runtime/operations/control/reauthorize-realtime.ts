import { projectRelatives } from '../../control/project-store.js';
import type { OperationContext } from '../types.js';

/**
 * Ends the open realtime connections (WebSocket and SSE) of non-admin
 * callers in the projects named, on every node, so they subscribe again
 * under the current rules. A subscription is authorized once, at subscribe:
 * a project suspended or archived, or an envelope narrowed, would otherwise
 * keep streaming to it. The grant cache's revoking invalidation does exactly
 * this (runtime/identity/grant-source.ts), and the cluster bus carries it.
 */
export async function reauthorizeRealtime(ctx: OperationContext, projectId: string, withDescendants: boolean): Promise<void> {
  const ids = [projectId];
  if (withDescendants) for (const d of await projectRelatives(ctx.services.db, projectId, 'descendants')) ids.push(d.id);
  await Promise.all(ids.map((id) => ctx.services.grants.invalidate(id, true)));
}
