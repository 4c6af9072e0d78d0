import type { Logger } from '../../runtime/log.js';
import { pendingJournalEntries } from '../../runtime/control/schema-migration.js';
import { runningTransitions } from '../../runtime/control/schema-transitions.js';
import type { SchemaCommandResult } from '../../runtime/control/schema-commands.js';
import type { SqlExecutor } from '../../storage/index.js';
import { ActorId } from '../actor-id.js';
import { defineActor } from '../define.js';
import type { ActorSystem } from '../system.js';
import { PROJECT_KIND, type ProjectMessages } from '../project/index.js';

/** The spec's operator actor; one activation per cluster (key `main`). */
export const RECOVERER_KIND = 'SchemaTransitionRecoverer';
export const recovererId = new ActorId(RECOVERER_KIND, 'main');

export interface RecovererDeps {
  db: SqlExecutor;
  log: Logger;
}

export interface RecoveredEntry {
  projectId: string;
  journalId: string;
  /** `applied` (finished), `failed` (undone), or the state it already had. */
  state: string;
}

/**
 * Finishes or undoes the schema changes a crash interrupted: every journal
 * entry still `pending` goes to its Project actor (the single writer of that
 * project's schema), which replays it on the head it was planned on or settles
 * it `failed`. Run once at node start; the Project actor's mailbox orders it
 * after any change still in flight, so a live change is never recovered twice.
 */
export const schemaRecovererActor = defineActor<Record<string, never>, RecovererDeps>({
  kind: RECOVERER_KIND,
  activate: async () => ({}),
  handlers: {
    async recover(ctx, _msg: Record<string, never>, deps): Promise<RecoveredEntry[]> {
      const out: RecoveredEntry[] = [];
      for (const p of await pendingJournalEntries(deps.db)) {
        const cmd: ProjectMessages['schemaCommand'] = { kind: 'recover', journalId: p.journalId };
        try {
          const res = await ctx.system.ask<SchemaCommandResult>(new ActorId(PROJECT_KIND, p.projectId), 'schemaCommand', cmd, { timeoutMs: 120_000 });
          const state = res.kind === 'recovered' ? res.outcome.state : 'unknown';
          out.push({ ...p, state });
          deps.log.info('interrupted schema change recovered', { projectId: p.projectId, journalId: p.journalId, state });
        } catch (err) {
          deps.log.warn('interrupted schema change not recovered', { projectId: p.projectId, journalId: p.journalId, error: err instanceof Error ? err.message : String(err) });
        }
      }
      // Transitions a stopped node left mid-backfill: their Project actor restarts the backfill (then contracts).
      for (const t of await runningTransitions(deps.db)) {
        const cmd: ProjectMessages['schemaCommand'] = { kind: 'transitionResume', branch: t.branch, transitionId: t.id };
        ctx.system.tell(new ActorId(PROJECT_KIND, t.projectId), 'schemaCommand', cmd);
      }
      return out;
    },
  },
});

/** Registers the recoverer; `recoverNow()` runs it (at start, and for tests and operators). */
export class SchemaRecoveryDriver {
  constructor(private readonly system: ActorSystem, deps: RecovererDeps) {
    system.register(schemaRecovererActor, deps);
  }

  recoverNow(timeoutMs = 300_000): Promise<RecoveredEntry[]> {
    return this.system.ask<RecoveredEntry[]>(recovererId, 'recover', {}, { timeoutMs });
  }
}
