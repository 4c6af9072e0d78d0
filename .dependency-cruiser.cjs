/**
 * Import rules, checked by `npm test` (test/architecture/imports.test.ts).
 * Type-only imports count: a cycle of types still ties the modules into one
 * unit that cannot be understood or moved apart.
 */
const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

/** Folders of the tree being checked (relative to where dependency-cruiser runs) that have an `index.ts`. */
function foldersWithIndex(dir = '') {
  const found = [];
  for (const entry of readdirSync(dir === '' ? '.' : dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.') || entry.name === 'node_modules' || entry.name === 'dist') continue;
    const folder = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (existsSync(join(folder, 'index.ts'))) found.push(folder);
    found.push(...foldersWithIndex(folder));
  }
  return found;
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const FOLDERS_WITH_INDEX = foldersWithIndex();

/**
 * Deep imports that stay for now, each pair named (importer → files of the
 * folder it may still reach) with the reason. Anything else is an error.
 */
const DEEP_IMPORTS_ALLOWED = [
  {
    folder: 'runtime/identity',
    why: 'These modules lie below identity\'s services: the index re-exports grant-source.ts (which imports services.ts) and tokens.ts '
      + '(actor.ts → policy/grant-policy.ts), so importing it from here would close an import cycle. They take the leaf files until '
      + 'Actor, claims and the verifier interfaces move down a layer.',
    imports: {
      'runtime/services.ts': ['api-keys.ts', 'policy.ts', 'token-verifier.ts'],
      'runtime/governance/compiled.ts': ['actor.ts'],
      'runtime/operations/types.ts': ['actor.ts'],
      'runtime/policy/actor-ref.ts': ['claims.ts'],
      'runtime/policy/compiled-policy.ts': ['actor.ts'],
      'runtime/policy/policy-filter.ts': ['actor.ts'],
      'runtime/policy/row-policy.ts': ['actor.ts'],
      'runtime/realtime/session-connections.ts': ['revocations.ts'],
      'runtime/streams/stream-slots.ts': ['actor.ts'],
    },
  },
];

/**
 * A folder with an `index.ts` is entered through it: a module outside the
 * folder imports `X/index.js`, never `X/<file>.js`, so the index is the whole
 * of what the folder offers and its other files can change freely. A
 * sub-folder with its own `index.ts` is its own door (`actors/outbox/index.ts`
 * is an actor definition, not part of the actor system `actors/index.ts`
 * exports), so its index may be imported directly and its other files only
 * through it.
 */
function throughIndex(folder) {
  const f = escape(folder);
  // A sub-folder with its own index is that folder's rule's business (its index may be imported directly).
  const doors = [`^${f}/index\\.ts$`, ...FOLDERS_WITH_INDEX.filter((sub) => sub.startsWith(`${folder}/`)).map((sub) => `^${escape(sub)}/`)];
  const comment = `${folder}/ has an index.ts: import what it offers from ${folder}/index.js (export it there if it is missing), not from the file behind it.`;
  const allowed = DEEP_IMPORTS_ALLOWED.filter((a) => a.folder === folder);
  const excepted = allowed.flatMap((a) => Object.keys(a.imports).map((from) => `^${escape(from)}$`));
  return [
    { name: `through-${folder}/index`, severity: 'error', comment, from: { pathNot: [`^${f}/`, ...excepted] }, to: { path: `^${f}/`, pathNot: doors } },
    ...allowed.flatMap((a) => Object.entries(a.imports).map(([from, files]) => ({
      name: `through-${folder}/index-except-from-${from}`,
      severity: 'error',
      comment: `${comment} (${from} may still import ${files.join(', ')}: ${a.why})`,
      from: { path: `^${escape(from)}$` },
      to: { path: `^${f}/`, pathNot: [...doors, ...files.map((file) => `^${f}/${escape(file)}$`)] },
    }))),
  ];
}

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
    ...FOLDERS_WITH_INDEX.flatMap(throughIndex),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
