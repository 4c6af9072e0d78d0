import { quoteIdent } from '../../storage/index.js';
import type { FilterableEntity } from '../filter/parse.js';
import { collectionName } from '../publication/naming.js';
import type { EntityDef, FieldDef } from '../publication/model.js';
import type { Relation } from '../publication/relations.js';
import { constraintName, qualifiedTable } from '../publication/sql-names.js';

/** Numbers the compiled entities of this process: prepared statement names never outlive their text. */
let compiledCount = 0;

const generated = (name: string, type: FieldDef['type'], references: string | null = null): FieldDef => ({
  name, type, nullable: false, unique: name === 'id', default: null, values: [], references,
});

/**
 * Everything a request needs about one entity, built once per publication:
 * SQL fragments, field lookups, constraint→field maps. Requests only look
 * things up here.
 */
export class CompiledEntity implements FilterableEntity {
  readonly entityName: string;
  readonly collection: string;
  readonly table: string;
  readonly softDelete: boolean;
  readonly userFields: readonly FieldDef[];
  readonly userFieldByName: ReadonlyMap<string, FieldDef>;
  /** User fields plus id/createdAt/updatedAt: what filter and sort may name. */
  readonly queryableFields: ReadonlyMap<string, FieldDef>;
  /** `t.id, t."name", …` in output order. */
  readonly selectList: string;
  /** Same, unqualified, for RETURNING. */
  readonly returningList: string;
  /** `AND t."deletedAt" IS NULL` for soft-delete entities, else ''. */
  readonly liveClause: string;
  readonly relations: ReadonlyMap<string, Relation>;
  readonly fieldOfConstraint: ReadonlyMap<string, string>;
  /** `GET /{entity}/{id}`: its SQL, and the prepared statement name that stands for exactly that text. */
  readonly readById: { sql: string; name: string };
  /** Filled after every entity of the publication is compiled. */
  private peers: ReadonlyMap<string, CompiledEntity> = new Map();

  constructor(schema: string, readonly def: EntityDef, relations: ReadonlyMap<string, Relation>) {
    this.entityName = def.entityName;
    this.collection = collectionName(def.entityName);
    this.table = qualifiedTable(schema, def.entityName);
    this.softDelete = def.softDelete;
    this.userFields = def.fields;
    this.userFieldByName = new Map(def.fields.map((f) => [f.name, f]));
    // `id` is typed as a self-reference so filter values must be UUIDs (never a 22P02 from the database).
    const q = new Map<string, FieldDef>([['id', generated('id', 'ID', def.entityName)]]);
    for (const f of def.fields) q.set(f.name, f);
    q.set('createdAt', generated('createdAt', 'DateTime'));
    q.set('updatedAt', generated('updatedAt', 'DateTime'));
    this.queryableFields = q;
    const cols = ['id', ...def.fields.map((f) => f.name), 'createdAt', 'updatedAt', 'concurrencyToken'].map(quoteIdent);
    this.selectList = cols.map((c) => `t.${c}`).join(', ');
    this.returningList = cols.join(', ');
    this.liveClause = def.softDelete ? ' AND t."deletedAt" IS NULL' : '';
    // A new name per compiled entity (so per publication): a column that changed type under the same
    // text gets a fresh plan instead of PostgreSQL's "cached plan must not change result type".
    this.readById = { sql: `SELECT ${this.selectList} FROM ${this.table} t WHERE t.id = $1${this.liveClause}`, name: `plinth_read_${++compiledCount}` };
    this.relations = relations;
    const byConstraint = new Map<string, string>();
    for (const f of def.fields) {
      for (const suffix of ['key', 'fkey', 'check'] as const) byConstraint.set(constraintName(def.entityName, f.name, suffix), f.name);
    }
    this.fieldOfConstraint = byConstraint;
  }

  link(peers: ReadonlyMap<string, CompiledEntity>): void {
    this.peers = peers;
  }

  peer(entityName: string): CompiledEntity {
    const e = this.peers.get(entityName);
    if (e === undefined) throw new Error(`entity ${entityName} missing from publication`);
    return e;
  }

  field(name: string): FieldDef | undefined {
    return this.queryableFields.get(name);
  }

  related(name: string): FilterableEntity | undefined {
    if (name === 'id') return undefined;
    const f = this.userFieldByName.get(name);
    return f?.references == null ? undefined : this.peers.get(f.references);
  }
}
