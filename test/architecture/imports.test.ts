/**
 * The import rules of `.dependency-cruiser.cjs` hold for the whole tree: no
 * import cycle (type-only imports included) and no upward arrow between
 * layers. A failure prints dependency-cruiser's report: the cycle or the
 * arrow, and the rule's advice.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/test/architecture/ → the repository root.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const TREES = ['main.ts', 'adapters', 'runtime', 'node', 'cluster', 'storage', 'actors', 'scripts', 'bench', 'test'];

function cruise(cwd: string, config: string, paths: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CLI, '--config', config, '--output-type', 'err-long', ...paths], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

it('the source tree has no import cycle and no upward import between layers', () => {
  const r = cruise(ROOT, '.dependency-cruiser.cjs', TREES);
  assert.equal(r.status, 0, r.out);
  // The checker really resolved the tree's `.js` specifiers to its `.ts` files (else it would find nothing to check).
  const cruised = /\((\d+) modules, (\d+) dependencies cruised\)/.exec(r.out);
  assert.ok(cruised !== null && Number(cruised[1]) > 300 && Number(cruised[2]) > 1000, r.out);
});

it('the same rules catch a cycle, a type-only one included, and an upward import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-imports-'));
  try {
    mkdirSync(join(dir, 'actors'));
    mkdirSync(join(dir, 'cluster'));
    writeFileSync(join(dir, 'actors', 'a.ts'), "import { b } from './b.js';\nexport const a = (): number => b + 1;\n");
    writeFileSync(join(dir, 'actors', 'b.ts'), "import type { Node } from '../cluster/node.js';\nexport const b = 1;\nexport type Uses = Node;\n");
    writeFileSync(join(dir, 'cluster', 'node.ts'), "import type { a } from '../actors/a.js';\nexport interface Node { f: typeof a }\n");
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    writeFileSync(join(dir, '.dependency-cruiser.cjs'), `module.exports = require(${JSON.stringify(join(ROOT, '.dependency-cruiser.cjs'))});\n`);
    const r = cruise(dir, '.dependency-cruiser.cjs', ['actors', 'cluster']);
    assert.notEqual(r.status, 0, r.out);
    assert.match(r.out, /no-circular/);
    assert.match(r.out, /actors-below-cluster/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a module outside a folder with an index.ts imports the index, never a file behind it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-imports-'));
  try {
    const files: Record<string, string> = {
      'lib/index.ts': "export { impl } from './impl.js';\nexport { inner } from './inner/index.js';\n",
      'lib/impl.ts': "import { deep } from './inner/deep.js';\nexport const impl = deep + 1;\n",
      'lib/inner/index.ts': "export { deep } from './deep.js';\nexport const inner = 1;\n",
      'lib/inner/deep.ts': 'export const deep = 1;\n',
      'plain/a.ts': 'export const a = 1;\n',
      'app/past-the-index.ts': "import { impl } from '../lib/impl.js';\nexport const x = impl;\n",
      'app/type-past-the-index.ts': "import type { deep } from '../lib/inner/deep.js';\nexport type X = typeof deep;\n",
      'app/through-the-index.ts': "import { impl } from '../lib/index.js';\nexport const y = impl;\n",
      'app/sub-folder-door.ts': "import { inner } from '../lib/inner/index.js';\nexport const z = inner;\n",
      'app/no-index-folder.ts': "import { a } from '../plain/a.js';\nexport const w = a;\n",
      // The named exceptions let one importer reach only the files they list.
      'runtime/identity/index.ts': "export { k } from './keys.js';\nexport type { V } from './api-keys.js';\n",
      'runtime/identity/keys.ts': 'export const k = 1;\n',
      'runtime/identity/api-keys.ts': 'export interface V { v: number }\n',
      'runtime/services.ts': "import type { V } from './identity/api-keys.js';\nimport { k } from './identity/keys.js';\nexport const s: V = { v: k };\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    writeFileSync(join(dir, '.dependency-cruiser.cjs'), `module.exports = require(${JSON.stringify(join(ROOT, '.dependency-cruiser.cjs'))});\n`);
    const r = cruise(dir, '.dependency-cruiser.cjs', ['app', 'lib', 'plain', 'runtime']);
    assert.notEqual(r.status, 0, r.out);
    const found = [...r.out.matchAll(/through-(\S+)\/index(?:-except-from-\S+)?: (\S+) → (\S+)/g)].map((m) => `${m[2]} → ${m[3]} (${m[1]})`).sort();
    // A sub-folder with its own index is its own door, for its parent's files too.
    assert.deepEqual(found, ['app/past-the-index.ts → lib/impl.ts (lib)', 'app/type-past-the-index.ts → lib/inner/deep.ts (lib/inner)', 'lib/impl.ts → lib/inner/deep.ts (lib/inner)', 'runtime/services.ts → runtime/identity/keys.ts (runtime/identity)'], r.out);
    assert.match(r.out, /app\/type-past-the-index\.ts → lib\/inner\/deep\.ts\s+lib\/inner\/ has an index\.ts/, r.out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
