/**
 * The OpenAPI 3.1 document of a publication's REST surface (served at
 * `/openapi.json` and `/openapi.yaml`). Entity routes come from
 * entityOperations(), authored operations from the model's handlers
 * (openapi-authored.ts); the platform's routes from their declared operations
 * (runtime/operations/catalog.ts).
 * Output is deterministic: same input, same document, same key order.
 */
import { stringify } from 'yaml';
import type { ProjectModel } from './model.js';
import { entityOperations } from './operations.js';
import { relationsOf } from './relations.js';
import {
  SHARED_SCHEMA_NAMES, globalSecurity, securitySchemes, sharedHeaders, sharedParameters, sharedResponses, sharedSchemas, type Json,
} from './openapi-components.js';
import { allocateSchemaNames, entitySchemas } from './openapi-schemas.js';
import { entityOperationObject } from './openapi-paths.js';
import { authoredOperationPaths } from './openapi-authored.js';
import type { DeclaredOpenApi } from '../operations/contract/index.js';

export interface OpenApiInput {
  model: ProjectModel;
  publicationVersion: number;
  tenantSlug: string;
  projectSlug: string;
  basePath: '/api' | '/v1';
  /** The platform's declared operations' paths, schemas and tags (runtime/operations/contract/openapi.ts). */
  platform: DeclaredOpenApi;
}

const DESCRIPTION =
  'REST surface of one project publication. Every call carries `X-Service-Tenant` and `X-Service-Project`. ' +
  'Single results are `{ data, meta: { correlationId } }`, lists `{ data: [], page, meta }`, errors `{ error: { code, message, reasonCode, correlationId, … } }`. ' +
  'Every response carries `X-Service-Correlation-Id`. Decimal values travel as JSON strings, timestamps as ISO 8601 UTC strings.';

export function buildOpenApiDocument(input: OpenApiInput): Record<string, unknown> {
  const { model, platform } = input;
  const names = allocateSchemaNames(model, [...SHARED_SCHEMA_NAMES, ...Object.keys(platform.schemas)]);
  const relations = relationsOf(model);

  const paths: Record<string, Json> = {};
  const addOperation = (path: string, method: string, operation: Json): void => {
    const item = (paths[path] ??= {});
    // Entity routes are added first and win; reserved collection names keep platform routes apart.
    if (item[method] === undefined) item[method] = operation;
  };
  for (const op of entityOperations(model)) {
    addOperation(op.path, op.method.toLowerCase(), entityOperationObject(op, { names, relations }));
  }
  // An authored instance operation wins over a relation attach of its name, as the router resolves it.
  for (const a of authoredOperationPaths(model)) (paths[a.path] ??= {}).post = a.operation;
  for (const s of platform.paths) addOperation(s.path, s.method, s.operation);

  const schemas: Json = { ...sharedSchemas(), ...platform.schemas };
  for (const e of model.entities) Object.assign(schemas, entitySchemas(e, names));

  return {
    openapi: '3.1.0',
    info: {
      title: `Plinth ${input.tenantSlug}/${input.projectSlug}`,
      version: `publication-${input.publicationVersion}`,
      description: DESCRIPTION,
    },
    servers: [{ url: input.basePath }],
    'x-publication-version': input.publicationVersion,
    tags: [
      ...model.entities.map((e) => ({ name: e.entityName, description: `${e.entityName} rows.` })),
      // An entity of the same name (e.g. `Events`) keeps the tag; names must be unique.
      ...platform.tags.filter((t) => !model.entities.some((e) => e.entityName === t.name)).map((t) => ({ name: t.name, description: t.description })),
    ],
    security: globalSecurity(),
    paths,
    components: {
      schemas,
      parameters: sharedParameters(),
      headers: sharedHeaders(),
      responses: sharedResponses(),
      securitySchemes: securitySchemes(),
    },
  };
}

/** YAML form of a document (no anchors/aliases, no line folding). */
export function openApiToYaml(doc: Record<string, unknown>): string {
  return stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });
}
