import type { FieldDef, FieldType, ProjectModel } from '../publication/model.js';

/** The proto type a field type travels as (CONTRACT: gRPC: Decimal, ID, reference and enum values are strings). */
export const PROTO_TYPE: Record<FieldType, string> = {
  ID: 'string', String: 'string', Decimal: 'string', Enum: 'string',
  Int: 'int32', Boolean: 'bool',
  DateTime: 'google.protobuf.Timestamp', Instant: 'google.protobuf.Timestamp',
  JSON: 'google.protobuf.Value',
};

/** Numbers 1–4 of every entity message: the generated fields, the same in every publication. */
export const GENERATED_NUMBERS = { id: 1, created_at: 2, updated_at: 3, concurrency_token: 4 } as const;
const FIRST_USER_NUMBER = 5;

/** The numbers of one entity's user fields in one publication, and what earlier publications used and dropped. */
export interface EntityNumbers {
  /** Field name → number, for the fields of this publication. */
  numbers: ReadonlyMap<string, number>;
  /** Numbers used by earlier publications and not by this one: `reserved`, never reused. */
  reservedNumbers: readonly number[];
  /** Names of earlier fields absent from this publication. */
  reservedNames: readonly string[];
}

/** What numbering remembers per entity across publications. */
interface EntityHistory {
  /** `<field name> <proto type>` → number: a field keeps its number for its life. */
  assigned: Map<string, number>;
  next: number;
  names: Set<string>;
}

const keyOf = (f: FieldDef): string => `${f.name} ${PROTO_TYPE[f.type]}`;

/**
 * Field numbers that stay stable across publications. Numbers are not
 * stored; they are derived from the branch's publication history (every
 * version is kept in `publications`): walking the versions in order, a field
 * gets the next free number of its entity the first time it appears, keyed
 * by its name and proto type. A field keeps its number for its life; one
 * that is removed, or whose proto type changes (a new key), leaves its number
 * reserved; the numbers are never reused, so an old client never misreads a
 * newer message. Feed every version in order with `add`, then read `of`.
 */
export class FieldNumbering {
  private readonly entities = new Map<string, EntityHistory>();

  add(model: ProjectModel): void {
    for (const e of model.entities) {
      let h = this.entities.get(e.entityName);
      if (h === undefined) {
        h = { assigned: new Map(), next: FIRST_USER_NUMBER, names: new Set() };
        this.entities.set(e.entityName, h);
      }
      for (const f of e.fields) {
        const key = keyOf(f);
        if (!h.assigned.has(key)) h.assigned.set(key, h.next++);
        h.names.add(f.name);
      }
    }
  }

  /** The numbers of `fields` (the entity as the publication defines it), after every version up to it was added. */
  of(entityName: string, fields: readonly FieldDef[]): EntityNumbers {
    this.add({ entities: [{ entityName, fields: [...fields], softDelete: false }] });
    const h = this.entities.get(entityName)!;
    const numbers = new Map<string, number>();
    for (const f of fields) numbers.set(f.name, h.assigned.get(keyOf(f))!);
    const live = new Set(numbers.values());
    const reservedNumbers = [...h.assigned.values()].filter((n) => !live.has(n)).sort((a, b) => a - b);
    const reservedNames = [...h.names].filter((n) => !numbers.has(n)).sort();
    return { numbers, reservedNumbers, reservedNames };
  }
}
