import { PLATFORM_SCHEMA, type Migration } from './migration.js';

const S = PLATFORM_SCHEMA;

/**
 * Platform migration 29: scheduling (CONTRACT "Scheduling", docs/scheduling.md).
 *
 * Exactly-once is carried by unique keys, not by locks that can expire under a
 * paused process: one run per (trigger, scheduledFor) for time triggers, one per
 * (trigger, event) for event and webhook triggers, one attempt per (run, number),
 * and at most one running run per definition whose overlap is not `allow`
 * (`serial`, fixed when the run is made). Definitions are soft-deleted so their
 * runs keep naming them. Shipped: never edit it, add a new one.
 */
export const m0029: Migration = {
  version: 29,
  name: 'scheduling: task definitions, triggers, runs, attempts, trigger audit',
  statements: [
    `CREATE TABLE ${S}.task_definitions (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      branch text NOT NULL,
      name text NOT NULL,
      handler text NOT NULL,
      input jsonb NOT NULL DEFAULT 'null'::jsonb,
      state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused')),
      retry jsonb NOT NULL,
      timeout_seconds integer NOT NULL,
      overlap text NOT NULL CHECK (overlap IN ('skip', 'queue', 'allow')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz NULL)`,
    `CREATE UNIQUE INDEX task_definitions_name_idx ON ${S}.task_definitions (project_id, branch, name) WHERE deleted_at IS NULL`,
    `CREATE TABLE ${S}.task_triggers (
      id uuid PRIMARY KEY,
      definition_id uuid NOT NULL REFERENCES ${S}.task_definitions(id) ON DELETE CASCADE,
      project_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('cron', 'interval', 'once', 'event', 'webhook')),
      spec jsonb NOT NULL,
      misfire text NOT NULL CHECK (misfire IN ('fireOnce', 'skip')),
      entity text NULL,
      receiver_id uuid NULL,
      next_fire_at timestamptz NULL,
      last_fire_at timestamptz NULL,
      created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX task_triggers_due_idx ON ${S}.task_triggers (next_fire_at) WHERE next_fire_at IS NOT NULL`,
    `CREATE INDEX task_triggers_definition_idx ON ${S}.task_triggers (definition_id)`,
    `CREATE INDEX task_triggers_event_idx ON ${S}.task_triggers (project_id, entity) WHERE kind = 'event'`,
    `CREATE INDEX task_triggers_receiver_idx ON ${S}.task_triggers (receiver_id) WHERE kind = 'webhook'`,
    `CREATE TABLE ${S}.task_runs (
      id uuid PRIMARY KEY,
      seq bigserial NOT NULL,
      tenant_id uuid NOT NULL,
      project_id uuid NOT NULL REFERENCES ${S}.projects(id) ON DELETE CASCADE,
      branch text NOT NULL,
      definition_id uuid NOT NULL,
      trigger_id uuid NULL,
      cause text NOT NULL CHECK (cause IN ('schedule', 'event', 'webhook', 'manual')),
      scheduled_for timestamptz NOT NULL,
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      serial boolean NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      input jsonb NOT NULL DEFAULT 'null'::jsonb,
      output jsonb NULL,
      error jsonb NULL,
      event_id uuid NULL,
      context jsonb NULL,
      correlation_id text NOT NULL,
      due_at timestamptz NOT NULL DEFAULT now(),
      cancel_requested boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz NULL,
      finished_at timestamptz NULL)`,
    `CREATE UNIQUE INDEX task_runs_fire_idx ON ${S}.task_runs (trigger_id, scheduled_for) WHERE cause = 'schedule'`,
    `CREATE UNIQUE INDEX task_runs_event_idx ON ${S}.task_runs (trigger_id, event_id) WHERE event_id IS NOT NULL`,
    `CREATE UNIQUE INDEX task_runs_serial_running_idx ON ${S}.task_runs (definition_id) WHERE serial AND state = 'running'`,
    `CREATE INDEX task_runs_due_idx ON ${S}.task_runs (due_at) WHERE state = 'queued'`,
    `CREATE INDEX task_runs_list_idx ON ${S}.task_runs (project_id, seq)`,
    `CREATE INDEX task_runs_definition_idx ON ${S}.task_runs (definition_id, state)`,
    `CREATE TABLE ${S}.task_attempts (
      id uuid PRIMARY KEY,
      seq bigserial NOT NULL,
      run_id uuid NOT NULL REFERENCES ${S}.task_runs(id) ON DELETE CASCADE,
      project_id uuid NOT NULL,
      number integer NOT NULL,
      state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'succeeded', 'failed', 'timedOut', 'cancelled', 'lost')),
      node text NOT NULL,
      lease_until timestamptz NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz NULL,
      error jsonb NULL,
      UNIQUE (run_id, number))`,
    `CREATE INDEX task_attempts_lease_idx ON ${S}.task_attempts (lease_until) WHERE state = 'running'`,
    `CREATE INDEX task_attempts_list_idx ON ${S}.task_attempts (project_id, seq)`,
    `CREATE TABLE ${S}.trigger_audit (
      seq bigserial PRIMARY KEY,
      project_id uuid NOT NULL,
      at timestamptz NOT NULL DEFAULT now(),
      trigger_id uuid NULL,
      definition_id uuid NOT NULL,
      scheduled_for timestamptz NULL,
      decision text NOT NULL,
      run_id uuid NULL)`,
    `CREATE INDEX trigger_audit_project_idx ON ${S}.trigger_audit (project_id, seq)`,
    // Retention (runtime/retention/rules.ts) deletes finished runs and old audit rows, oldest first.
    `CREATE INDEX task_runs_finished_idx ON ${S}.task_runs (finished_at) WHERE state IN ('succeeded', 'failed', 'cancelled')`,
    `CREATE INDEX trigger_audit_at_idx ON ${S}.trigger_audit (at)`,
    `CREATE TABLE ${S}.scheduler_state (
      name text PRIMARY KEY,
      node text NOT NULL,
      last_scan_at timestamptz NOT NULL,
      lag_ms integer NOT NULL,
      last_seq bigint NOT NULL DEFAULT 0,
      gap_since timestamptz NULL)`,
  ],
};
