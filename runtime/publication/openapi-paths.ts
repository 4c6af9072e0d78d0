/**
 * OpenAPI operations of the entity routes, one per entry of
 * entityOperations(): the route list itself lives only in operations.ts.
 */
import type { EntityOperation, EntityOperationKind } from './operations.js';
import type { Relation } from './relations.js';
import type { EntitySchemaNames } from './openapi-schemas.js';
import {
  correlationHeaders, errorResponses, headerRef, jsonContent, paramRef, schemaRef, scopeHeaderParams, uuidSchema, type Json,
} from './openapi-components.js';

export interface EntityPathContext {
  names: Map<string, EntitySchemaNames>;
  relations: Map<string, Map<string, Relation>>;
}

const LIST_QUERY = ['Filter', 'Sort', 'Fields', 'Include', 'Page', 'PageSize', 'Cursor', 'IncludeTotal'];

/** Error statuses per kind; 401, 403, 422 and 429 apply to every entity route. */
const ERRORS: Record<EntityOperationKind, number[]> = {
  List: [],
  Count: [],
  Create: [409, 413],
  BatchCreate: [409, 413],
  BatchUpdate: [404, 409, 413],
  BatchDelete: [404, 409, 413],
  Read: [404],
  Update: [404, 409, 413],
  Replace: [404, 409, 413],
  Delete: [404, 409],
  RelationList: [404],
  RelationAttach: [404, 409, 413],
  RelationDetach: [404, 409],
};
const COMMON_ERRORS = [400, 401, 403, 422, 429];

const SUMMARY: Record<EntityOperationKind, (entity: string, rel: string | null) => string> = {
  List: (e) => `List ${e} rows`,
  Create: (e) => `Create a ${e}`,
  Count: (e) => `Count ${e} rows matching a filter`,
  BatchCreate: (e) => `Create up to 1000 ${e} rows in one transaction`,
  BatchUpdate: (e) => `Update up to 1000 ${e} rows in one transaction`,
  BatchDelete: (e) => `Delete up to 1000 ${e} rows in one transaction`,
  Read: (e) => `Read one ${e}`,
  Update: (e) => `Update fields of a ${e}`,
  Replace: (e) => `Replace a ${e}`,
  Delete: (e) => `Delete a ${e}`,
  RelationList: (e, r) => `Related rows of ${e}.${r}`,
  RelationAttach: (e, r) => `Attach a row to ${e}.${r}`,
  RelationDetach: (e, r) => `Detach a row from ${e}.${r}`,
};

function parameters(op: EntityOperation, rel: Relation | null): Json[] {
  const p: Json[] = [];
  if (op.path.includes('{id}')) p.push(paramRef('EntityId'));
  if (op.path.includes('{relatedId}')) p.push(paramRef('RelatedId'));
  switch (op.kind) {
    case 'List': p.push(...LIST_QUERY.map(paramRef)); break;
    case 'RelationList': if (rel?.kind === 'toMany') p.push(...LIST_QUERY.map(paramRef)); break;
    case 'Count': p.push(paramRef('Filter')); break;
    case 'Read': p.push(paramRef('Include'), paramRef('Fields')); break;
    case 'Delete': case 'BatchDelete': p.push(paramRef('Force')); break;
    default: break;
  }
  p.push(...scopeHeaderParams());
  if (op.kind === 'Create' || op.kind === 'BatchCreate') p.push(paramRef('IdempotencyKey'));
  if (op.kind === 'Update' || op.kind === 'Replace') p.push(paramRef('IfMatch'));
  return p;
}

const body = (schema: Json, description?: string): Json => ({
  required: true,
  ...(description === undefined ? {} : { description }),
  content: jsonContent(schema),
});

function requestBody(op: EntityOperation, n: EntitySchemaNames): Json | undefined {
  switch (op.kind) {
    case 'Create': return body(schemaRef(n.createInput));
    case 'Replace': return body(schemaRef(n.replaceInput));
    case 'Update': return body(schemaRef(n.updateInput));
    case 'BatchCreate': return body({ type: 'object', required: ['items'], additionalProperties: false, properties: { items: { type: 'array', minItems: 1, maxItems: 1000, items: schemaRef(n.createInput) } } });
    case 'BatchUpdate': return body({ type: 'object', required: ['items'], additionalProperties: false, properties: { items: { type: 'array', minItems: 1, maxItems: 1000, items: schemaRef(n.batchUpdateItem) } } });
    case 'BatchDelete': return body({ type: 'object', required: ['ids'], additionalProperties: false, properties: { ids: { type: 'array', minItems: 1, maxItems: 1000, items: uuidSchema() } } });
    case 'RelationAttach': return body(schemaRef('RelationAttachInput'));
    default: return undefined;
  }
}

function successSchema(op: EntityOperation, n: EntitySchemaNames, rel: Relation | null, ctx: EntityPathContext): Json {
  switch (op.kind) {
    case 'List': return schemaRef(n.list);
    case 'Count': return schemaRef('CountResult');
    case 'BatchCreate': case 'BatchUpdate': return schemaRef(n.batchResult);
    case 'BatchDelete': return schemaRef('BatchDeleteResult');
    case 'RelationList': {
      const target = rel === null ? undefined : ctx.names.get(rel.target);
      if (rel === null || target === undefined) return { type: 'object', required: ['data', 'meta'], properties: { data: {}, meta: schemaRef('Meta') } };
      if (rel.kind === 'toMany') return schemaRef(target.list);
      return {
        type: 'object',
        required: ['data', 'meta'],
        properties: { data: { anyOf: [schemaRef(target.read), { type: 'null' }] }, meta: schemaRef('Meta') },
      };
    }
    default: return schemaRef(n.single);
  }
}

function description(op: EntityOperation, rel: Relation | null): string | undefined {
  if (rel === null) return undefined;
  const other = rel.target;
  switch (op.kind) {
    case 'RelationList':
      return rel.kind === 'toOne'
        ? `The ${other} row referenced by ${op.entity}.${rel.field} (\`data\` is null when unset).`
        : `${other} rows whose \`${rel.field}\` references this ${op.entity}.`;
    case 'RelationAttach':
      return rel.kind === 'toOne'
        ? `Sets ${op.entity}.${rel.field} to \`relatedId\` (a ${other}). Answers the updated ${op.entity}.`
        : `Sets ${other}.${rel.field} of row \`relatedId\` to this ${op.entity}. Answers this ${op.entity} (the row in the path).`;
    case 'RelationDetach':
      return rel.kind === 'toOne'
        ? `Clears ${op.entity}.${rel.field} when it equals \`relatedId\` (422 when the field is not nullable).`
        : `Clears ${other}.${rel.field} of row \`relatedId\` (422 when the field is not nullable).`;
    default:
      return undefined;
  }
}

/** The OpenAPI operation object of one entity operation. */
export function entityOperationObject(op: EntityOperation, ctx: EntityPathContext): Json {
  const n = ctx.names.get(op.entity)!;
  const rel = op.relation === null ? null : ctx.relations.get(op.entity)?.get(op.relation) ?? null;
  const out: Json = {
    operationId: op.operationId,
    tags: [op.entity],
    summary: SUMMARY[op.kind](op.entity, op.relation),
  };
  const desc = description(op, rel);
  if (desc !== undefined) out.description = desc;
  out.parameters = parameters(op, rel);
  const reqBody = requestBody(op, n);
  if (reqBody !== undefined) out.requestBody = reqBody;
  const status = String(op.successStatus);
  const success: Json = op.successStatus === 204
    ? { description: 'No content.', headers: correlationHeaders() }
    : {
      description: 'Success.',
      headers: op.kind === 'Read' ? { ...correlationHeaders(), ETag: headerRef('ETag') } : correlationHeaders(),
      content: jsonContent(successSchema(op, n, rel, ctx)),
    };
  out.responses = { [status]: success, ...errorResponses([...COMMON_ERRORS, ...ERRORS[op.kind]]) };
  out['x-operation-kind'] = op.kind;
  out['x-required-grants'] = [...op.requiredGrants];
  return out;
}
