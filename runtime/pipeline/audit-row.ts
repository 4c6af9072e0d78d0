/** The decisions stage 6 records and Explainability reports (CONTRACT: Explainability). */
export type AccessDecision = 'Allow' | 'Deny' | 'Mask' | 'Challenge' | 'Error';

export type Decision = AccessDecision;

/** What a denial adds to its record (the envelope's own fields); null for most rows. */
export interface AuditDetails {
  missingGrants?: readonly string[];
  bindingId?: string;
  requiredStrength?: string;
  /** The protocol of a request that did not come in over REST (`graphql`, …); REST rows leave it out. */
  protocol?: string;
  /** A row authored code left (runtime/authored/evidence.ts, log.ts); absent on every other row. */
  authored?: AuthoredAuditDetails;
}

/**
 * What an authored-code row adds (CONTRACT "Sandbox and limits" → Evidence): `stage: 'authored'`,
 * the handler and the exact bytes it ran. An invocation row adds how it ended and what it used
 * (the stack of a thrown error is kept here, never in the answer); a `ctx.log` row its line.
 */
export interface AuthoredAuditDetails {
  stage: 'authored';
  handler: string;
  sha256: string;
  outcome?: string;
  cpuMs?: number;
  wallMs?: number;
  peakMemoryBytes?: number;
  stack?: string;
  level?: 'info' | 'warn' | 'error';
  message?: string;
  fields?: Record<string, unknown>;
}

/**
 * The usage an executed operation consumed (CONTRACT: Usage and quotas), carried
 * by its audit row: one evidence row per request (docs/usage.md).
 */
export interface RecordedUsage {
  kind: string;
  quantity: number;
  dimensions?: Readonly<Record<string, string>>;
}

/**
 * One audit row. `evaluatedFilter`, `fieldMasks` and `details` are kept as
 * the objects the pipeline built: the writer serializes them in its flush,
 * never on the request path (runtime/pipeline/audit-writer.ts).
 */
export interface AuditRow {
  /** When the request was decided, epoch ms (also the usage event's `at`). */
  at: number;
  correlationId: string;
  tenantId: string | null;
  projectId: string | null;
  actor: string;
  operationId: string;
  decision: Decision;
  reasonCode: string;
  status: number;
  /** The pipeline stage that decided: 1–5 for a refusal there, 6 once the operation ran. */
  stage: number;
  evaluatedFilter: unknown;
  fieldMasks: readonly string[];
  details: AuditDetails | null;
  /** The usage the operation consumed; null when it consumed none (or metering is off). */
  usage: RecordedUsage | null;
}


/** Pipeline stages by number: 0 is the protocol adapter's refusal before the pipeline (refusal.ts), 6 the operation's execution. */
const STAGE_NAMES = ['Adapter', 'Authenticate', 'ResolveScope', 'Governance', 'Grants', 'RowPolicy', 'Executed'] as const;

export type StageName = (typeof STAGE_NAMES)[number] | 'Quota';

/**
 * The name of the stage that decided a request (CONTRACT "Explainability": `stage`), from what
 * its audit row keeps: the last stage it reached and its decision.
 * - A refusal names the stage that refused. Quota admission runs right after the row policy,
 *   under stage number 5; the row policy itself only filters and masks and never refuses, so a
 *   Deny at 5 is the quota's (`Quota`).
 * - Allow and Mask name `RowPolicy`: the last access stage, the one that let the request
 *   through (and applied the field mask). The operation's own 404/409/422 is still an access
 *   Allow and names it too; only an `Error` while the operation ran names `Executed`.
 */
export function stageNameOf(stage: number, decision: string): StageName | null {
  if (stage === 5 && decision === 'Deny') return 'Quota';
  if (stage === 6 && decision !== 'Error') return 'RowPolicy';
  return STAGE_NAMES[stage] ?? null;
}
