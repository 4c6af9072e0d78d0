import { notFound } from '../../errors/service-error.js';
import { noGrants, type OperationSpec, type Result } from '../types.js';

/** One field of an entity as MCP's schema resource shows it (CONTRACT: MCP resources). */
export interface DescribedField {
  name: string;
  type: string;
  nullable: boolean;
  unique?: true;
  values?: string[];
  references?: string;
}

export interface EntityDescription {
  entityName: string;
  fields: DescribedField[];
  publicationVersion: number;
}

const entityOf = (params: Readonly<Record<string, string>>): string => params.entity ?? '';

/**
 * An entity's schema as the caller may see it, for MCP's
 * `resources/read` and `prompts/get` (dispatched as a part of the MCP
 * request, `inv.params.entity`). It needs what reading the entity's rows
 * needs (the REST `Read` twin's grants), and leaves out the fields a mask
 * hides from the caller (stage 5's row policy). An unknown entity is 404.
 */
export const MCP_DESCRIBE_SPEC: OperationSpec = {
  id: 'Mcp.Entity.Describe', authn: 'user', scope: 'project',
  grants: (ctx) => ctx.scope?.publication.operations.get(`Entity.${entityOf(ctx.inv.params)}.Read`)?.requiredGrants ?? noGrants(),
  execute: async (ctx): Promise<Result> => {
    const pub = ctx.scope!.publication;
    const entity = pub.entities.get(entityOf(ctx.inv.params));
    if (entity === undefined) throw notFound('Mcp.Entity.Unknown', `no entity '${entityOf(ctx.inv.params)}' in this publication`);
    const masked = ctx.rowPolicy?.read(entity).masked ?? [];
    ctx.trace.fieldMasks = masked;
    const fields = entity.userFields.filter((f) => !masked.includes(f.name)).map((f): DescribedField => ({
      name: f.name, type: f.type, nullable: f.nullable,
      ...(f.unique ? { unique: true as const } : {}),
      ...(f.type === 'Enum' ? { values: [...f.values] } : {}),
      ...(f.references === null ? {} : { references: f.references }),
    }));
    const body: EntityDescription = { entityName: entity.entityName, fields, publicationVersion: pub.version };
    return { status: 200, body };
  },
};
