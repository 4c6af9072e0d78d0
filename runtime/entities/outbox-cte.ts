import { PLATFORM_SCHEMA } from '../../storage/index.js';
import type { SqlParams } from '../filter/to-sql.js';
import type { OperationContext } from '../operations/types.js';
import type { CompiledEntity } from './compiled-entity.js';

export type ChangeKind = 'created' | 'updated' | 'deleted';

/** Rows of one statement written for different requests (combined creates): each event names its own request. */
export interface PerRowCorrelation {
  /** The FROM clause that joins `source` to each row's correlation id. */
  from: string;
  /** The SQL expression of that correlation id. */
  correlation: string;
}

/**
 * A CTE clause that writes one outbox row per row of CTE `source`, in the
 * same statement as the entity write: the write and its event commit or
 * roll back together, in one round trip.
 */
export function outboxCte(
  ctx: OperationContext, params: SqlParams, kind: ChangeKind, changedFields: readonly string[], entity: CompiledEntity = ctx.entity!, source = 'w',
  perRow: PerRowCorrelation | null = null,
): string {
  const scope = ctx.scope!;
  const p = (v: unknown): string => params.add(v);
  return `ob AS (INSERT INTO ${PLATFORM_SCHEMA}.outbox (event_id, type, tenant_id, project_id, branch, entity, entity_id, changed_fields, correlation_id, publication_version)
    SELECT gen_random_uuid(), ${p(`entity.${entity.entityName}.${kind}`)}, ${p(scope.tenant.id)}::uuid, ${p(scope.project.id)}::uuid, ${p(scope.branch)}, ${p(entity.entityName)}, ${source}.id::text, ${p(JSON.stringify(changedFields))}::jsonb, ${perRow?.correlation ?? p(ctx.inv.correlationId)}, ${p(scope.publication.version)}::bigint FROM ${perRow?.from ?? source})`;
}
