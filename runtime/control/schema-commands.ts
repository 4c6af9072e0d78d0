import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import { notFound } from '../errors/service-error.js';
import { readHead } from './schema-change.js';
import { applySchemaMigration, recoverJournalEntry, type MigrationResult, type RecoveryOutcome, type SchemaMigration } from './schema-migration.js';
import { planRollback } from './schema-rollback.js';
import {
  cleanupTransition, contractTransition, createTransition, executeTransition, readTransition, rollbackTransition, transitionRecord, type TransitionOutcome,
} from './schema-transitions.js';

const S = PLATFORM_SCHEMA;

/** Who asked, for the journal. */
export interface SchemaCaller {
  branch: string;
  actor: string;
  correlationId: string;
}

/**
 * Schema-journal writes carried out by the Project actor (the single writer of
 * a project's schema). The operations parse the bodies; these are the checked commands.
 */
export type SchemaCommand =
  | { kind: 'migrate'; migration: Omit<SchemaMigration, 'tenantId' | 'projectId'> }
  | ({ kind: 'rollback'; journalId: string } & SchemaCaller)
  | { kind: 'recover'; journalId: string }
  | { kind: 'snapshot'; branch: string }
  | { kind: 'transitionCreate'; branch: string; body: unknown }
  | ({ kind: 'transitionExecute' | 'transitionContract' | 'transitionRollback'; transitionId: string } & SchemaCaller)
  | { kind: 'transitionResume' | 'transitionCleanup'; branch: string; transitionId: string };

export type SchemaCommandResult =
  | { kind: 'migrated'; result: MigrationResult }
  /** `transition`: the recovered entry was a transition's expand; its backfill starts now. */
  | { kind: 'recovered'; outcome: RecoveryOutcome; transition?: TransitionOutcome }
  | { kind: 'snapshot'; id: string; publicationVersion: number }
  | { kind: 'transition'; outcome: TransitionOutcome };

export async function runSchemaCommand(db: SqlClient, tenantId: string, projectId: string, cmd: SchemaCommand): Promise<SchemaCommandResult> {
  switch (cmd.kind) {
    case 'migrate':
      return { kind: 'migrated', result: await applySchemaMigration(db, { ...cmd.migration, tenantId, projectId }) };
    case 'rollback': {
      const plan = await planRollback(db, projectId, cmd.branch, cmd.journalId);
      const result = await applySchemaMigration(db, {
        tenantId, projectId, branch: cmd.branch, actor: cmd.actor, correlationId: cmd.correlationId,
        kind: 'rollback', changes: plan.changes, rollbackOf: plan.rollbackOf,
      });
      return { kind: 'migrated', result };
    }
    case 'recover': {
      const outcome = await recoverJournalEntry(db, tenantId, projectId, cmd.journalId);
      if (outcome === null) throw notFound('Schema.JournalEntryNotFound', 'journal entry not found');
      const change = outcome.state === 'applied' && outcome.result !== null ? await transitionOfEntry(db, cmd.journalId) : null;
      if (change === null) return { kind: 'recovered', outcome };
      const t = await readTransition(db, projectId, change.branch, change.transitionId);
      return { kind: 'recovered', outcome, transition: { record: transitionRecord(t), publication: null, backfill: t.state === 'running' && t.phase === 'backfill' } };
    }
    case 'snapshot': {
      const head = await readHead(db, projectId, cmd.branch, false);
      const id = randomUUID();
      await db.query(
        `INSERT INTO ${S}.schema_snapshots (id, project_id, branch, publication_version, entities) VALUES ($1, $2, $3, $4, $5::jsonb)`,
        [id, projectId, cmd.branch, head.version, JSON.stringify(head.model.entities)],
      );
      return { kind: 'snapshot', id, publicationVersion: head.version };
    }
    case 'transitionCreate':
      return { kind: 'transition', outcome: { record: await createTransition(db, projectId, cmd.branch, cmd.body), publication: null, backfill: false } };
    case 'transitionExecute':
      return { kind: 'transition', outcome: await executeTransition(db, tenantId, projectId, cmd, cmd.transitionId) };
    case 'transitionContract':
      return { kind: 'transition', outcome: await contractTransition(db, tenantId, projectId, cmd, cmd.transitionId) };
    case 'transitionRollback':
      return { kind: 'transition', outcome: await rollbackTransition(db, tenantId, projectId, cmd, cmd.transitionId) };
    case 'transitionResume': {
      const t = await readTransition(db, projectId, cmd.branch, cmd.transitionId);
      const running = t.state === 'running';
      return { kind: 'transition', outcome: { record: transitionRecord(t), publication: null, backfill: running && t.phase === 'backfill', cleanup: running && t.phase === 'contract' } };
    }
    case 'transitionCleanup':
      return { kind: 'transition', outcome: await cleanupTransition(db, projectId, cmd.branch, cmd.transitionId) };
  }
}

/** The transition whose expand a journal entry is, if it is one. */
async function transitionOfEntry(db: SqlClient, journalId: string): Promise<{ branch: string; transitionId: string } | null> {
  const res = await db.query<{ branch: string; change: Record<string, unknown> | null }>(`SELECT branch, change FROM ${S}.schema_journal WHERE id = $1`, [journalId]);
  const c = res.rows[0]?.change;
  if (c == null || c.action !== 'transition' || c.phase !== 'expand' || typeof c.transitionId !== 'string') return null;
  return { branch: res.rows[0]!.branch, transitionId: c.transitionId };
}
