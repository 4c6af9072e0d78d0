/**
 * Import rules, checked by `npm test` (test/architecture/imports.test.ts).
 * Type-only imports count: a cycle of types still ties the modules into one
 * unit that cannot be understood or moved apart.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle. Break it by moving the shared piece down a layer, or by naming only what the lower module needs (an interface it owns).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'actors-below-cluster',
      severity: 'error',
      comment: 'The actor system defines its transport port (actors/transport.ts); cluster implements it. Actors never import cluster.',
      from: { path: '^actors/' },
      to: { path: '^cluster/' },
    },
    {
      name: 'runtime-below-adapters',
      severity: 'error',
      comment: 'runtime/ is protocol-neutral: adapters and the node import it, never the reverse (a route table is handed down through Services).',
      from: { path: '^runtime/' },
      to: { path: '^(adapters|node|cluster)/' },
    },
    {
      name: 'storage-at-the-bottom',
      severity: 'error',
      comment: 'storage/ is the SQL layer: it imports nothing of the platform above it.',
      from: { path: '^storage/' },
      to: { path: '^(runtime|adapters|node|cluster|actors)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
