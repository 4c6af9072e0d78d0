/**
 * Issue 23 part 3: protocols and entity operation kinds are closed unions,
 * and every projection that handles each member is a `Record` over the
 * union. So a kind or a protocol added to the build does not compile until
 * every projection handles it: metering (quota/units.ts), the CLI verbs and
 * endpoints (contract-projection.ts), the capability matrix
 * (publication/capabilities.ts) and Explainability's surfaces. Checked by
 * type-checking the real sources with one member added to each list.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// dist/test/architecture/ → the repository root.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const KINDS_FILE = join(ROOT, 'runtime', 'publication', 'operations.ts');
const PROTOCOLS_FILE = join(ROOT, 'runtime', 'versioning', 'platform.ts');

/** The sources with `Upsert` added to the entity operation kinds and `soap` to the protocols. */
function extended(file: string, text: string): string {
  if (file === KINDS_FILE) return text.replace("'RelationList', 'RelationAttach', 'RelationDetach',\n] as const", "'RelationList', 'RelationAttach', 'RelationDetach', 'Upsert',\n] as const");
  if (file === PROTOCOLS_FILE) return text.replace("'mcp', 'grpc'] as const", "'mcp', 'grpc', 'soap'] as const");
  return text;
}

it('a new entity operation kind or protocol does not build until metering, CLI verbs, endpoints, the matrix and the surfaces handle it', () => {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const roots = config.fileNames.filter((f) => f.startsWith(join(ROOT, 'runtime')) || f.startsWith(join(ROOT, 'adapters')));
  assert.ok(extended(KINDS_FILE, readFileSync(KINDS_FILE, 'utf8')) !== readFileSync(KINDS_FILE, 'utf8'), 'the kinds list moved: update this probe');
  assert.ok(extended(PROTOCOLS_FILE, readFileSync(PROTOCOLS_FILE, 'utf8')) !== readFileSync(PROTOCOLS_FILE, 'utf8'), 'the protocols list moved: update this probe');
  const host = ts.createCompilerHost({ ...config.options, noEmit: true });
  const read = host.readFile.bind(host);
  host.readFile = (f) => {
    const text = read(f);
    return text === undefined ? undefined : extended(ts.sys.resolvePath(f), text);
  };
  const program = ts.createProgram(roots, { ...config.options, noEmit: true, incremental: false }, host);
  const failing = new Set(ts.getPreEmitDiagnostics(program).filter((d) => d.file !== undefined).map((d) => relative(ROOT, d.file!.fileName)));
  for (const f of [
    'runtime/quota/units.ts', 'runtime/operations/control/contract-projection.ts',
    'runtime/publication/capabilities.ts', 'runtime/operations/explainability/surfaces.ts',
  ]) assert.ok(failing.has(f), `${f} builds with a kind or protocol it does not handle (failing: ${[...failing].join(', ')})`);
});
