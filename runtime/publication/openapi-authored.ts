/**
 * OpenAPI operations of a publication's authored operations (CONTRACT
 * "Operations": `operationId` `Operation.<name>` or `Entity.<Entity>.<name>`,
 * request and response schemas from the declaration's `input` and `output`).
 */
import { declaredOperations, type DeclaredOperation } from '../authored/declared-operations.js';
import type { ProjectModel } from './model.js';
import { correlationHeaders, errorResponses, jsonContent, paramRef, scopeHeaderParams, type Json } from './openapi-components.js';

/** What every authored operation may answer besides 200: the pipeline's refusals and the handler's failures (502, 504). */
const ERRORS = [400, 401, 403, 404, 409, 422, 429, 502, 503, 504];

function operationObject(d: DeclaredOperation): Json {
  const output: Json = d.op.output ?? { description: 'The handler\'s return value (the operation declares no `output`).' };
  return {
    operationId: d.operationId,
    tags: [d.entity ?? 'Operations'],
    summary: d.entity === null ? `Run the operation ${d.op.name}` : `Run the operation ${d.op.name} on one ${d.entity}`,
    description: `Runs the ${d.handler.surface} \`${d.handler.name}\`. Needs \`${d.requiredGrant}\`. The body is the input.`,
    parameters: [...(d.entity === null ? [] : [paramRef('EntityId')]), ...scopeHeaderParams(), paramRef('IdempotencyKey')],
    requestBody: { required: true, content: jsonContent(d.op.input) },
    responses: {
      200: {
        description: 'The handler\'s return value in `data`.',
        headers: correlationHeaders(),
        content: jsonContent({
          type: 'object', required: ['surface', 'state', 'correlationId', 'data'],
          properties: { surface: { type: 'string', const: 'Operation' }, state: { type: 'string', const: 'completed' }, correlationId: { type: 'string' }, data: output },
        }),
      },
      ...errorResponses(ERRORS),
    },
    'x-handler-surface': d.handler.surface,
    'x-required-grants': [d.requiredGrant],
  };
}

/** The POST routes of the model's authored operations: `/operations/{name}` and `/{collection}/{id}/{name}`. */
export function authoredOperationPaths(model: ProjectModel): Array<{ path: string; operation: Json }> {
  return declaredOperations(model).map((d) => ({
    path: d.collection === null ? `/operations/${d.op.name}` : `/${d.collection}/{id}/${d.op.name}`,
    operation: operationObject(d),
  }));
}
