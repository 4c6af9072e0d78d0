import type { HandlerDef } from '../authored/types.js';

/**
 * The canonical project model: what a user defines through /api/Schema.
 * Everything else (tables, operations, bindings, OpenAPI) is derived from it.
 */
export const FIELD_TYPES = ['ID', 'String', 'Int', 'Decimal', 'DateTime', 'Instant', 'Boolean', 'Enum', 'JSON'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldDef {
  name: string;
  type: FieldType;
  nullable: boolean;
  unique: boolean;
  /** JSON default applied by the database; null when absent. */
  default: unknown;
  /** Enum members; empty unless type is Enum. */
  values: string[];
  /** Related entity name for a reference (ID type only); null otherwise. */
  references: string | null;
}

export interface EntityDef {
  entityName: string;
  fields: FieldDef[];
  softDelete: boolean;
}

export interface ProjectModel {
  /** Sorted by entityName so the model and its hash are deterministic. */
  entities: EntityDef[];
  /**
   * Authored-code handlers pinned by this publication (runtime/authored/types.ts), sorted by name.
   * Absent when there are none, so a model without handlers hashes as it did before they existed.
   */
  handlers?: HandlerDef[];
}

export const EMPTY_MODEL: ProjectModel = { entities: [] };

/** Fields every entity has; users cannot define them. */
export const GENERATED_FIELDS = ['id', 'createdAt', 'updatedAt', 'concurrencyToken', 'deletedAt'] as const;

export const findEntity = (model: ProjectModel, name: string): EntityDef | undefined =>
  model.entities.find((e) => e.entityName === name);
