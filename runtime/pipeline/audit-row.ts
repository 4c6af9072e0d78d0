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

