/**
 * Scheduling's shapes (CONTRACT "Scheduling", docs/scheduling.md): task
 * definitions, triggers, runs, attempts and trigger-audit decisions, as the
 * routes answer them and as the scanner, the dispatcher and the workers share
 * them. Tables: storage/platform-migrations/0029-scheduling.ts.
 */

/** The surfaces a task definition's handler may have: the background ones that run as TaskRuns. */
export const TASK_HANDLER_SURFACES = ['ScheduledJob', 'EventConsumer', 'WebhookHandler'] as const;

export const OVERLAP_POLICIES = ['skip', 'queue', 'allow'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const MISFIRE_POLICIES = ['fireOnce', 'skip'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

export const TRIGGER_KINDS = ['cron', 'interval', 'once', 'event', 'webhook'] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];
/** The kinds the scanner fires by time (`next_fire_at`); event and webhook triggers fire on arrival. */
export const TIME_TRIGGER_KINDS: readonly TriggerKind[] = ['cron', 'interval', 'once'];

export const RUN_CAUSES = ['schedule', 'event', 'webhook', 'manual'] as const;
export type RunCause = (typeof RUN_CAUSES)[number];

export const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const FINISHED_RUN_STATES: readonly RunState[] = ['succeeded', 'failed', 'cancelled'];

export const ATTEMPT_STATES = ['running', 'succeeded', 'failed', 'timedOut', 'cancelled', 'lost'] as const;
export type AttemptState = (typeof ATTEMPT_STATES)[number];

export const TRIGGER_DECISIONS = ['started', 'skippedOverlap', 'skippedPaused', 'misfireCollapsed', 'misfireSkipped'] as const;
export type TriggerDecision = (typeof TRIGGER_DECISIONS)[number];

export interface RetryPolicy {
  maxAttempts: number;
  backoffSeconds: number;
  maxBackoffSeconds: number;
}

export const SCHEDULING_DEFAULTS = {
  retry: { maxAttempts: 3, backoffSeconds: 1, maxBackoffSeconds: 300 } satisfies RetryPolicy,
  timeoutSeconds: 60,
  overlap: 'skip' as OverlapPolicy,
  misfire: 'fireOnce' as MisfirePolicy,
  timezone: 'UTC',
} as const;

/** Bounds a definition is checked against (422 beyond them). */
export const SCHEDULING_LIMITS = {
  maxAttempts: 100,
  maxBackoffSeconds: 86_400,
  /** An attempt may run at most this long, whatever its handler's wall-clock limit (an hour). */
  maxTimeoutSeconds: 3_600,
  /** Triggers per definition. */
  maxTriggers: 32,
  /** The definition's and a manual run's input, as JSON text. */
  maxInputBytes: 256 * 1024,
} as const;

export const SCHEDULING_TIMING = {
  /**
   * An attempt's lease. Its worker renews it every `leaseRenewMs`; an attempt
   * whose lease ran out (its node died or froze) is marked `lost` by the
   * dispatcher and its run is queued again: CONTRACT's "≤ 30 s".
   */
  leaseMs: 15_000,
  leaseRenewMs: 5_000,
  /**
   * How often a worker looks for queued runs when nothing kicked it (other nodes' runs, retries
   * coming due). Runs queued on this node kick it at once (a trigger, the scanner, a freed slot):
   * the poll only bounds what another node queued or a backoff delayed, so it is kept cheap for
   * idle nodes (each poll is a query).
   */
  workerPollMs: 1_000,
  /** How often a worker checks its running attempts for a cancel request: CONTRACT stops one within 1 s. */
  cancelPollMs: 250,
  /** Scanner period when no fire is nearer: cron and interval runs start within 1 s of `scheduledFor`. */
  scanMaxSleepMs: 500,
  /** Dispatcher period: lost attempts are found within this much after their lease. */
  reapIntervalMs: 1_000,
  /** Jitter on retry backoff: ± this fraction (CONTRACT: ± 20 %). */
  retryJitter: 0.2,
} as const;

/** CONTRACT's TaskDefinition record. */
export interface TaskDefinitionRecord {
  id: string;
  name: string;
  handler: string;
  input: unknown;
  state: 'active' | 'paused';
  retry: RetryPolicy;
  timeoutSeconds: number;
  overlap: OverlapPolicy;
  createdAt: string;
  updatedAt: string;
}

/** The trigger spec by kind, as stored in `task_triggers.spec` (with its `kind`, which the `kind` column repeats for indexes and checks). */
export type TriggerSpec =
  | { kind: 'cron'; cron: string; timezone: string }
  | { kind: 'interval'; intervalSeconds: number }
  | { kind: 'once'; at: string }
  | { kind: 'event'; entity: string; kinds: Array<'created' | 'updated' | 'deleted'>; filter?: unknown }
  | { kind: 'webhook'; receiverId: string };

/** CONTRACT's trigger record: `{ id, definitionId, kind, …the kind's members, misfire, nextFireAt, createdAt }`. */
export type TriggerRecord = TriggerSpec & {
  id: string;
  definitionId: string;
  misfire: MisfirePolicy;
  nextFireAt: string | null;
  createdAt: string;
};

/** CONTRACT's TaskRun record. */
export interface TaskRunRecord {
  id: string;
  definitionId: string;
  triggerId: string | null;
  cause: RunCause;
  scheduledFor: string;
  state: RunState;
  attempts: number;
  input: unknown;
  output?: unknown;
  error?: unknown;
  eventId?: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
}

/** CONTRACT's TaskAttempt record. */
export interface TaskAttemptRecord {
  id: string;
  runId: string;
  number: number;
  state: AttemptState;
  node: string;
  startedAt: string;
  finishedAt?: string;
  error?: unknown;
}

/** CONTRACT's TriggerAudit event. */
export interface TriggerAuditRecord {
  at: string;
  triggerId: string | null;
  definitionId: string;
  scheduledFor: string | null;
  decision: TriggerDecision;
  runId?: string;
}

/**
 * What a run carries besides its input, kept in `task_runs.context` and handed to
 * the handler: `ctx.event` for event runs (the event envelope; names only) and
 * `ctx.webhook` for webhook runs (the accepted delivery).
 */
export interface RunContext {
  event?: Record<string, unknown>;
  webhook?: { receiverId: string; receiptId: string; type: string; externalId: string; payload: unknown };
}

/** The `task.run.*` event types in the event log (`entity: "TaskRun"`, `entityId` = the run id). */
export const RUN_EVENT_TYPES = { succeeded: 'task.run.succeeded', failed: 'task.run.failed', cancelled: 'task.run.cancelled' } as const;

/**
 * What the node's scheduling machinery offers operations (Services.scheduling):
 * `kick` after a run was queued, so the local worker looks at once instead of
 * at its next poll.
 */
export interface SchedulingRuntime {
  readonly nodeId: string;
  kick(): void;
}
