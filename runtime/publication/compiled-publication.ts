import { CompiledEntity } from '../entities/compiled-entity.js';
import type { PublicationRecord } from './record.js';
import { entityOperations, type EntityOperation } from './operations.js';
import { relationsOf } from './relations.js';
import { buildBindings, type ExposureBinding } from './bindings.js';
import { servableEntities } from '../graphql/names.js';
import { authoredOperations, type AuthoredOperation } from './authored-operations.js';
export { modelHash } from './hash.js';

export type { PublicationRecord } from './record.js';

/**
 * A publication compiled for serving: immutable, shared by every request
 * pinned to it. Built once per (project, branch, version) per node.
 */
export class CompiledPublication {
  readonly entities: ReadonlyMap<string, CompiledEntity>;
  readonly byCollection: ReadonlyMap<string, CompiledEntity>;
  readonly operations: ReadonlyMap<string, EntityOperation>;
  readonly bindings: readonly ExposureBinding[];
  /** The operations its handlers declare (authored-operations.ts), sorted by capability id. */
  readonly authoredOperations: readonly AuthoredOperation[];
  private readonly derived = new Map<string, unknown>();

  constructor(readonly record: PublicationRecord) {
    const rels = relationsOf(record.model);
    const entities = new Map<string, CompiledEntity>();
    for (const def of record.model.entities) {
      entities.set(def.entityName, new CompiledEntity(record.schema, def, rels.get(def.entityName)!));
    }
    for (const e of entities.values()) e.link(entities);
    this.entities = entities;
    this.byCollection = new Map([...entities.values()].map((e) => [e.collection, e]));
    const ops = entityOperations(record.model);
    this.operations = new Map(ops.map((o) => [o.operationId, o]));
    this.authoredOperations = authoredOperations(record.model);
    this.bindings = buildBindings(record, ops, servableEntities(entities.values()).kept, this.authoredOperations);
  }

  get version(): number {
    return this.record.version;
  }

  /** Memoizes a descriptor (OpenAPI, SDL, …) derived from this immutable publication. */
  derive<T>(key: string, build: () => T): T {
    if (!this.derived.has(key)) this.derived.set(key, build());
    return this.derived.get(key) as T;
  }
}

