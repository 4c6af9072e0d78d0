import { PLATFORM_SCHEMA, type SqlExecutor } from '../../../storage/index.js';
import type { Actor } from '../types.js';

/** What `GET /api/Explainability/access?correlationId=` answers: one request's recorded decision. */
export interface DecisionRecord {
  correlationId: string;
  at: string;
  actor: string;
  tenantId: string | null;
  projectId: string | null;
  operationId: string;
  decision: string;
  reasonCode: string;
  status: number;
  /** The stage that decided (0 the adapter, 1–5 refused there, 6 executed); null for rows recorded before stages were. */
  stage: number | null;
  stageName: string | null;
  evaluatedFilter: unknown;
  fieldMasks: string[];
  missingGrants?: string[];
  bindingId?: string;
  requiredStrength?: string;
  /** Present when the request did not come in over REST (`graphql`). */
  protocol?: string;
}

/** By stage number: 0 is the protocol adapter's refusal before the pipeline (runtime/pipeline/refusal.ts). */
const STAGE_NAMES = ['Adapter', 'Authenticate', 'ResolveScope', 'Governance', 'Grants', 'RowPolicy', 'Executed'] as const;

interface Row {
  correlationId: string;
  at: string;
  actor: string;
  tenantId: string | null;
  projectId: string | null;
  operationId: string;
  decision: string;
  reasonCode: string;
  status: number | string;
  stage: number | string | null;
  evaluatedFilter: unknown;
  fieldMasks: string[] | null;
  details: { missingGrants?: string[]; bindingId?: string; requiredStrength?: string; protocol?: string } | null;
}

const COLUMNS = `correlation_id AS "correlationId", at, actor, tenant_id AS "tenantId", project_id AS "projectId",
  operation_id AS "operationId", decision, reason_code AS "reasonCode", status, stage,
  evaluated_filter AS "evaluatedFilter", field_masks AS "fieldMasks", details`;

function toRecord(r: Row): DecisionRecord {
  const stage = r.stage === null ? null : Number(r.stage);
  const out: DecisionRecord = {
    correlationId: r.correlationId, at: r.at, actor: r.actor, tenantId: r.tenantId, projectId: r.projectId,
    operationId: r.operationId, decision: r.decision, reasonCode: r.reasonCode, status: Number(r.status),
    stage, stageName: stage === null ? null : STAGE_NAMES[stage] ?? null,
    evaluatedFilter: r.evaluatedFilter ?? null, fieldMasks: r.fieldMasks ?? [],
  };
  const d = r.details ?? {};
  if (d.missingGrants !== undefined) out.missingGrants = d.missingGrants;
  if (d.bindingId !== undefined) out.bindingId = d.bindingId;
  if (d.requiredStrength !== undefined) out.requiredStrength = d.requiredStrength;
  if (d.protocol !== undefined) out.protocol = d.protocol;
  return out;
}

/**
 * The newest record of `correlationId` the caller may read: the platform
 * admin reads any; anyone else only rows recorded under its own actor label,
 * and a project-bound credential (user token, API key) only rows of its
 * project or of no project (refused before scope resolution). A client may
 * send its own correlation id, so several actors can share one: the actor
 * condition is part of the lookup, never a check after it.
 */
export async function findDecision(db: SqlExecutor, actor: Actor, correlationId: string): Promise<DecisionRecord | null> {
  const params: unknown[] = [correlationId];
  let where = 'correlation_id = $1';
  if (actor.kind !== 'admin') {
    params.push(actor.label);
    where += ` AND actor = $${params.length}`;
    if (actor.projectId !== null) {
      params.push(actor.projectId);
      where += ` AND (project_id IS NULL OR project_id = $${params.length}::uuid)`;
    }
  }
  const res = await db.query<Row>(`SELECT ${COLUMNS} FROM ${PLATFORM_SCHEMA}.audit WHERE ${where} ORDER BY seq DESC LIMIT 1`, params);
  const row = res.rows[0];
  return row === undefined ? null : toRecord(row);
}
