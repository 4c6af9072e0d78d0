import { PLATFORM_SCHEMA, type SqlExecutor } from '../../../storage/index.js';
import { stageNameOf, type StageName } from '../../pipeline/audit-row.js';
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
  /** The name of the stage that decided (pipeline/audit-row.ts `stageNameOf`); null for rows recorded before stages were. */
  stage: StageName | null;
  /** The last stage the request reached: 0 the adapter, 1–5 refused there (5 also the quota), 6 executed. */
  stageNumber: number | null;
  /** Same as `stage`, the field's name before `stage` carried the name (kept for older clients). */
  stageName: StageName | null;
  evaluatedFilter: unknown;
  fieldMasks: string[];
  missingGrants?: string[];
  bindingId?: string;
  requiredStrength?: string;
  /** Present when the request did not come in over REST (`graphql`). */
  protocol?: string;
}

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
  const stageNumber = r.stage === null ? null : Number(r.stage);
  const stage = stageNumber === null ? null : stageNameOf(stageNumber, r.decision);
  const out: DecisionRecord = {
    correlationId: r.correlationId, at: r.at, actor: r.actor, tenantId: r.tenantId, projectId: r.projectId,
    operationId: r.operationId, decision: r.decision, reasonCode: r.reasonCode, status: Number(r.status),
    stage, stageNumber, stageName: stage,
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
  // Rows authored code left under the request's correlation id are not the request's decision.
  let where = `correlation_id = $1 AND details->'authored' IS NULL`;
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
