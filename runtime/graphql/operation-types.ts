import {
  GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInputObjectType, GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLString,
  type GraphQLFieldConfig, type GraphQLFieldConfigArgumentMap, type GraphQLScalarType,
} from 'graphql';
import type { AuthoredOperation } from '../publication/authored-operations.js';
import { graphqlOperationNames } from './operation-names.js';
import { JSONScalar } from './scalars.js';

type Schema = Record<string, unknown>;

/** JSON Schema's scalar types as GraphQL shows them (an enum of strings is a String). */
const SCALAR: Record<string, GraphQLScalarType> = { string: GraphQLString, integer: GraphQLInt, number: GraphQLFloat, boolean: GraphQLBoolean };

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

interface ScalarField {
  name: string;
  type: GraphQLScalarType;
  /** In `required` and not nullable (`type: ["string", "null"]`). */
  nonNull: boolean;
}

/** A property's scalar, or null when it is none (an object, a list, several types, no type). */
function scalarOf(s: unknown): { type: GraphQLScalarType; nullable: boolean } | null {
  if (typeof s !== 'object' || s === null) return null;
  const t = (s as Schema).type;
  const types = Array.isArray(t) ? t : [t];
  const own = types.filter((x) => x !== 'null');
  if (own.length !== 1 || typeof own[0] !== 'string') {
    const e = (s as Schema).enum;
    // An enum without a type: a String when every member is a string.
    return t === undefined && Array.isArray(e) && e.length > 0 && e.every((v) => typeof v === 'string') ? { type: GraphQLString, nullable: false } : null;
  }
  const type = SCALAR[own[0]];
  return type === undefined ? null : { type, nullable: own.length !== types.length };
}

/**
 * The fields of an object-of-scalars schema (CONTRACT "Operations": such a
 * schema becomes `<Name>Input` / `<Name>Result`), or null when the schema is
 * anything else (then the `JSON` scalar stands for it): not `type: "object"`,
 * no properties, a property that is no scalar or no GraphQL name.
 */
export function scalarFieldsOf(schema: Schema | null): ScalarField[] | null {
  if (schema === null || schema.type !== 'object') return null;
  const props = schema.properties;
  if (typeof props !== 'object' || props === null || Array.isArray(props)) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const out: ScalarField[] = [];
  // By name: the stored model is jsonb, which keeps no key order, so the declared order cannot be the SDL's.
  for (const [name, s] of Object.entries(props as Schema).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const scalar = scalarOf(s);
    if (scalar === null || !NAME.test(name) || name.startsWith('__')) return null;
    out.push({ name, type: scalar.type, nonNull: required.has(name) && !scalar.nullable });
  }
  return out.length === 0 ? null : out;
}

/** The mutation field of one operation: `<name>(id: ID!, input: <Name>Input!): <Name>Result!` (no `id` for a project operation). */
export function operationField(op: AuthoredOperation): { field: GraphQLFieldConfig<unknown, unknown>; resultType: string | null } {
  const n = graphqlOperationNames(op.name);
  const inFields = scalarFieldsOf(op.input);
  const outFields = scalarFieldsOf(op.output);
  const input = inFields === null ? JSONScalar : new GraphQLInputObjectType({
    name: n.input,
    fields: Object.fromEntries(inFields.map((f) => [f.name, { type: f.nonNull ? new GraphQLNonNull(f.type) : f.type }])),
  });
  const args: GraphQLFieldConfigArgumentMap = {};
  if (op.entity !== null) args.id = { type: new GraphQLNonNull(GraphQLID), description: `The ${op.entity} row's id.` };
  args.input = { type: new GraphQLNonNull(input) };
  const description = `${op.entity === null ? 'Project operation' : `Operation on one ${op.entity}`} \`${op.name}\` (authored handler ${op.handler.name}).`;
  if (outFields === null) {
    // CONTRACT "Operations": the result is `<Name>Result!`, the `JSON` scalar standing for the type where `output` is not an
    // object of scalars (or is absent): `JSON!`. A handler answering null there is a GraphQL field error, as for any non-null field.
    return { field: { type: new GraphQLNonNull(JSONScalar), args, description }, resultType: null };
  }
  const result = new GraphQLObjectType({
    name: n.result,
    fields: Object.fromEntries(outFields.map((f) => [f.name, { type: f.nonNull ? new GraphQLNonNull(f.type) : f.type }])),
  });
  return { field: { type: new GraphQLNonNull(result), args, description }, resultType: n.result };
}
