import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

/**
 * The model's scalars as GraphQL shows them (CONTRACT: GraphQL). Values are
 * serialized exactly as REST serializes them (the executor hands over the
 * REST row values), so `serialize` passes strings through. Input values are
 * checked here only for shape; the field rules (precision, ranges) are the
 * entity's own, applied by the same code as REST after coercion.
 */

function stringLiteral(name: string, ast: ValueNode): string {
  if (ast.kind !== Kind.STRING) throw new GraphQLError(`${name} takes a string`, { nodes: ast });
  return ast.value;
}

function stringValue(name: string, v: unknown): string {
  if (typeof v !== 'string') throw new GraphQLError(`${name} takes a string`);
  return v;
}

/** Decimal: a string (`"12.50"`) so no precision is lost; input also takes a number, as REST does. */
export const DecimalScalar = new GraphQLScalarType({
  name: 'Decimal',
  description: 'Decimal number serialized as a string (e.g. "12.50"); input takes a string or a number.',
  serialize: (v) => (typeof v === 'number' ? String(v) : stringValue('Decimal', v)),
  parseValue: (v) => {
    if (typeof v === 'number' || typeof v === 'string') return v;
    throw new GraphQLError('Decimal takes a string or a number');
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING) return ast.value;
    if (ast.kind === Kind.INT || ast.kind === Kind.FLOAT) return Number(ast.value);
    throw new GraphQLError('Decimal takes a string or a number', { nodes: ast });
  },
});

function isoScalar(name: 'DateTime' | 'Instant', description: string): GraphQLScalarType {
  return new GraphQLScalarType({
    name, description,
    serialize: (v) => (v instanceof Date ? v.toISOString() : stringValue(name, v)),
    parseValue: (v) => stringValue(name, v),
    parseLiteral: (ast) => stringLiteral(name, ast),
  });
}

export const DateTimeScalar = isoScalar('DateTime', 'ISO 8601 UTC date and time, same precision as REST.');
export const InstantScalar = isoScalar('Instant', 'ISO 8601 UTC instant, same precision as REST.');

/** Any JSON value, as a JSON field holds it. */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: function literal(ast, variables): unknown {
    switch (ast.kind) {
      case Kind.STRING: case Kind.BOOLEAN: return ast.value;
      case Kind.INT: case Kind.FLOAT: return Number(ast.value);
      case Kind.NULL: return null;
      case Kind.LIST: return ast.values.map((x) => literal(x, variables));
      case Kind.OBJECT: return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value, variables)]));
      case Kind.VARIABLE: return variables?.[ast.name.value];
      default: throw new GraphQLError('JSON takes a JSON value', { nodes: ast });
    }
  },
});
