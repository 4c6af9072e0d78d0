import { buildOpenApiDocument, openApiToYaml } from '../../publication/openapi.js';
import type { CompiledPublication } from '../../publication/compiled-publication.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { CONTROL_PLANE_UNMETERED, declaredOpenApi, type DeclaredOpenApi, type OperationContract } from '../contract/index.js';
import { DISCOVERY_TAG, DOCUMENT_SCHEMAS as S } from './document-schemas.js';

/** The declared operations' part of every document: the same for every publication, so derived once. */
let platformPart: DeclaredOpenApi | null = null;
const platformOpenApi = (ctx: OperationContext): DeclaredOpenApi => (platformPart ??= declaredOpenApi(ctx.services.routes?.declared?.() ?? []));

/** The OpenAPI document is built once per publication and base path, then served from memory. */
function openApi(ctx: OperationContext): Record<string, unknown> {
  const scope = ctx.scope!;
  const pub: CompiledPublication = scope.publication;
  const basePath = ctx.inv.basePath === '/v1' ? '/v1' : '/api';
  return pub.derive(`openapi${basePath}`, () =>
    buildOpenApiDocument({ model: pub.record.model, publicationVersion: pub.version, tenantSlug: scope.tenant.slug, projectSlug: scope.project.slug, basePath, platform: platformOpenApi(ctx) }),
  );
}

/**
 * Discovery is readable by any caller of the project (user or admin): the
 * document describes routes, not data. Anonymous callers get 401.
 */
const document = (path: string, summary: string, output: OperationContract['output']): OperationContract => ({
  tag: DISCOVERY_TAG, summary, routes: [{ method: 'GET', path }], output, errors: [400, 401, 404],
  metering: CONTROL_PLANE_UNMETERED, stability: 'stable',
});

export const DISCOVERY_SPECS = {
  openApiJson: {
    id: 'Discovery.OpenApi.Json', authn: 'user', scope: 'project', grants: noGrants,
    contract: document('openapi.json', 'The OpenAPI 3.1 document of the project\'s REST surface (serving publication), as JSON', { status: 200, body: S.PlatformOpenApiDocument }),
    execute: async (ctx) => ({ status: 200, body: openApi(ctx) }),
  },
  openApiYaml: {
    id: 'Discovery.OpenApi.Yaml', authn: 'user', scope: 'project', grants: noGrants,
    contract: document('openapi.yaml', 'The same OpenAPI 3.1 document as YAML', { status: 200, mediaType: 'application/yaml' }),
    execute: async (ctx) => {
      const text = ctx.scope!.publication.derive(`openapi-yaml${ctx.inv.basePath}`, () => openApiToYaml(openApi(ctx)));
      return { status: 200, body: text, headers: { 'Content-Type': 'application/yaml; charset=utf-8' } };
    },
  },
} satisfies Record<string, DeclaredSpec>;
