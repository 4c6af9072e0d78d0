/**
 * compileHandler on its own (runtime/authored/compile.ts): the bundle is one script whose
 * global holds the handler's exports, helpers and JSON bundled in; resolution tries the
 * exact path, then `.ts`, then `.js`; what it refuses and where it says the problem is.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { BUNDLE_GLOBAL, compileHandler, MAX_BUNDLE_BYTES, type SourceReader } from '../../runtime/authored/compile.js';
import { ServiceError } from '../../runtime/errors/service-error.js';

const reader = (files: Record<string, string>): SourceReader => async (p) => (p in files ? Buffer.from(files[p]!, 'utf8') : null);

async function refusal(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    assert.ok(ServiceError.is(err), String(err));
    return err;
  }
  assert.fail('expected a refusal');
}

it('bundles relative .ts, .js and .json imports into one iife whose global holds the exports; sha256 is of the entry bytes', async () => {
  const files = {
    'src/h.ts': "import { twice } from './lib/twice';\nimport { inc } from '../shared/inc.js';\nimport cfg from './cfg.json';\ntype N = number;\nexport const named = 1;\nexport default async function (_ctx: unknown, input: { n: N }) { return inc(twice(input.n)) + cfg.k; }\n",
    'src/lib/twice.ts': 'export const twice = (n: number): number => n * 2;\n',
    'shared/inc.js': 'export const inc = (n) => n + 1;\n',
    'src/cfg.json': '{ "k": 100 }',
  };
  const out = await compileHandler('src/h.ts', 'default', reader(files));
  assert.equal(out.sourceSha256, createHash('sha256').update(files['src/h.ts']).digest('hex'));
  assert.ok(out.code.startsWith(`var ${BUNDLE_GLOBAL} = `), out.code.slice(0, 80));
  const sandbox: Record<string, any> = {};
  runInNewContext(out.code, sandbox);
  const mod = sandbox[BUNDLE_GLOBAL];
  assert.equal(await mod.default({}, { n: 3 }), 107);
  assert.equal(mod.named, 1);
  assert.doesNotMatch(out.code, /: number/, 'types stripped');
  await compileHandler('src/h.ts', 'named', reader(files));
});

it('refuses packages, built-ins, absolute paths and paths above the root; missing exports, sources and unsupported types; syntax errors with 1-based places', async () => {
  const bad = async (src: string, exp = 'default') => refusal(compileHandler('h.js', exp, reader({ 'h.js': src, 'x.txt': 'x' })));
  for (const spec of ['node:fs', 'fs', 'lodash', '@scope/pkg', '/abs.js']) {
    const e = await bad(`import x from '${spec}';\nexport default x;\n`);
    assert.equal(e.reasonCode, 'Handler.ImportNotAllowed', spec);
    assert.deepEqual([e.details.details!.path, e.details.details!.line, e.details.details!.column], ['h.js', 1, 15], spec);
  }
  assert.equal((await bad("const f = require('fs');\nexport default f;\n")).reasonCode, 'Handler.ImportNotAllowed');
  assert.equal((await bad("export default async () => import('node:os');\n")).reasonCode, 'Handler.ImportNotAllowed');
  assert.match(String((await bad("import x from '../up.js';\nexport default x;\n")).details.details!.message), /outside/);
  assert.match(String((await bad("import x from './x.txt';\nexport default x;\n")).details.details!.message), /no source asset/);
  assert.match(String((await bad('export const a = 1;\n')).details.details!.message), /no export 'default' \(its exports are a\)/);
  assert.match(String((await bad('const a = 1;\n')).details.details!.message), /exports nothing/);
  const syntax = await bad('export default function () {\n  return 1 +;\n}\n');
  assert.equal(syntax.reasonCode, 'Handler.CompileFailed');
  assert.deepEqual([syntax.details.details!.line, syntax.details.details!.column], [2, 13]);
  assert.equal((await refusal(compileHandler('h.json', 'default', reader({ 'h.json': '{}' })))).reasonCode, 'Handler.CompileFailed');
  assert.equal((await refusal(compileHandler('none.ts', 'default', reader({})))).reasonCode, 'Handler.CompileFailed');
});

it('a bundle over the cap is 422 Handler.BundleTooLarge', async () => {
  const big = `export default () => ${JSON.stringify('x'.repeat(MAX_BUNDLE_BYTES + 10))};\n`;
  assert.equal((await refusal(compileHandler('h.js', 'default', reader({ 'h.js': big })))).reasonCode, 'Handler.BundleTooLarge');
});
