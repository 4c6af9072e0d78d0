/**
 * Compiling a handler at publish (CONTRACT "Handlers" → Language): esbuild bundles the
 * entry source asset with every source asset it imports by relative path into one
 * script the sandbox runs (`iife`, globalName `__plinthHandler`). Nothing outside
 * the branch's source assets is reachable: a package, a Node built-in or an absolute
 * path is `Handler.ImportNotAllowed`; anything else that stops the build is
 * `Handler.CompileFailed` naming the file, line and column.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import * as esbuild from 'esbuild';
import { ServiceError } from '../errors/service-error.js';

/** The bundle's global: the sandbox reads the handler's exports from it. */
export const BUNDLE_GLOBAL = '__plinthHandler';
/** The largest bundle a publish accepts (the sandbox loads it on every cold invocation). */
export const MAX_BUNDLE_BYTES = 5 * 1024 * 1024;

/** Reads a source asset of the branch being published: its bytes, or null when there is no such file. */
export type SourceReader = (path: string) => Promise<Buffer | null>;

export interface CompiledHandler {
  code: string;
  /** Hex sha256 of the entry file's bytes (what the publication pins as the handler's `sha256`). */
  sourceSha256: string;
}

/** Where a compile problem is: 1-based line and column; 0 and 0 when it has no place in a file (a missing entry). */
export interface CompileProblem {
  path: string;
  line: number;
  column: number;
  message: string;
}

const NS = 'asset';
const LOADERS: Record<string, esbuild.Loader> = { '.ts': 'ts', '.js': 'js', '.mjs': 'js', '.json': 'json' };
const ENTRY_EXTENSIONS = ['.ts', '.js', '.mjs'];

export const compileFailed = (p: CompileProblem): ServiceError =>
  new ServiceError('VALIDATION_FAILED', 'Handler.CompileFailed', `${p.path}:${p.line}:${p.column}: ${p.message}`, { field: 'source', details: { ...p } });

const importNotAllowed = (p: CompileProblem): ServiceError =>
  new ServiceError('VALIDATION_FAILED', 'Handler.ImportNotAllowed', `${p.path}:${p.line}:${p.column}: ${p.message}`, { field: 'source', details: { ...p } });

/** A relative specifier against its importer; null when it climbs above the tree's root. */
function relativeTarget(importer: string, spec: string): string | null {
  const joined = posix.normalize(posix.join(posix.dirname(importer), spec));
  return joined.startsWith('../') || joined === '..' || joined.startsWith('/') ? null : joined;
}

/** Why a specifier may not be bundled, or null when it is a relative path. */
function refusal(spec: string): string | null {
  if (spec.startsWith('./') || spec.startsWith('../')) return null;
  if (spec.startsWith('node:')) return `'${spec}' is a Node built-in; a handler imports only source assets of its branch by relative path`;
  if (spec.startsWith('/')) return `'${spec}' is an absolute path; import source assets by relative path ('./${spec.replace(/^\/+/, '')}')`;
  return `'${spec}' is a package; a handler imports only source assets of its branch by relative path`;
}

/**
 * Compiles `entry` (a source-asset path) with `exportName` required among its exports.
 * Every source file is read once per compile. Throws the 422s above; nothing is stored.
 */
export async function compileHandler(entry: string, exportName: string, read: SourceReader): Promise<CompiledHandler> {
  const ext = posix.extname(entry);
  if (!ENTRY_EXTENSIONS.includes(ext)) throw compileFailed({ path: entry, line: 0, column: 0, message: `a handler's source is a .ts, .js or .mjs file, not '${ext || entry}'` });
  const files = new Map<string, Buffer | null>();
  const readOnce = async (path: string): Promise<Buffer | null> => {
    if (!files.has(path)) files.set(path, await read(path));
    return files.get(path)!;
  };
  const entryBytes = await readOnce(entry);
  if (entryBytes === null) throw compileFailed({ path: entry, line: 0, column: 0, message: `no source asset '${entry}' on this branch` });
  let refused: CompileProblem | null = null;

  const plugin: esbuild.Plugin = {
    name: 'plinth-source-assets',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point') return { path: entry, namespace: NS };
        const why = refusal(args.path);
        if (why !== null) {
          refused ??= { path: args.importer, line: 0, column: 0, message: why };
          return { errors: [{ text: why }] };
        }
        const base = relativeTarget(args.importer, args.path);
        if (base === null) return { errors: [{ text: `'${args.path}' leads outside the branch's source assets` }] };
        for (const candidate of [base, `${base}.ts`, `${base}.js`]) {
          if (LOADERS[posix.extname(candidate)] !== undefined && await readOnce(candidate) !== null) return { path: candidate, namespace: NS };
        }
        return { errors: [{ text: `no source asset '${base}' (tried '${base}', '${base}.ts', '${base}.js'; a source is .ts, .js, .mjs or .json)` }] };
      });
      build.onLoad({ filter: /.*/, namespace: NS }, async (args) => {
        const bytes = await readOnce(args.path);
        if (bytes === null) return { errors: [{ text: `no source asset '${args.path}'` }] };
        return { contents: bytes, loader: LOADERS[posix.extname(args.path)]! };
      });
    },
  };

  let esm: esbuild.BuildResult<{ write: false; metafile: true }>;
  try {
    esm = await esbuild.build({
      entryPoints: [entry], bundle: true, format: 'esm', platform: 'neutral', write: false, metafile: true,
      outfile: 'handler.js', logLevel: 'silent', plugins: [plugin],
    });
  } catch (err) {
    throw problemOf(err, entry, refused);
  }
  const exports = Object.values(esm.metafile.outputs).find((o) => o.entryPoint !== undefined)?.exports ?? [];
  if (!exports.includes(exportName)) {
    const has = exports.length === 0 ? 'it exports nothing' : `its exports are ${exports.join(', ')}`;
    throw compileFailed({ path: entry, line: 0, column: 0, message: `'${entry}' has no export '${exportName}' (${has})` });
  }
  // The bundle's exports were checked on the ES module; the sandbox runs it as one script.
  const iife = await esbuild.transform(esm.outputFiles[0]!.text, { format: 'iife', globalName: BUNDLE_GLOBAL, loader: 'js', platform: 'neutral', logLevel: 'silent' });
  if (Buffer.byteLength(iife.code, 'utf8') > MAX_BUNDLE_BYTES) {
    throw new ServiceError('VALIDATION_FAILED', 'Handler.BundleTooLarge', `the compiled bundle is larger than ${MAX_BUNDLE_BYTES} bytes`, { field: 'source' });
  }
  return { code: iife.code, sourceSha256: createHash('sha256').update(entryBytes).digest('hex') };
}

/** The first esbuild error as the 422 the caller sees (an import refused by the plugin wins). */
function problemOf(err: unknown, entry: string, refused: CompileProblem | null): unknown {
  const errors = (err as { errors?: esbuild.Message[] }).errors;
  if (!Array.isArray(errors)) return err;
  const first = errors[0];
  const loc = first?.location ?? null;
  const place = (text: string): CompileProblem => ({
    path: loc === null ? entry : loc.file.replace(/^asset:/, ''),
    line: loc?.line ?? 0,
    column: loc === null ? 0 : loc.column + 1,
    message: text,
  });
  if (refused !== null) {
    const hit = errors.find((e) => e.text === refused!.message);
    return importNotAllowed(hit?.location == null ? refused : { ...refused, path: hit.location.file.replace(/^asset:/, ''), line: hit.location.line, column: hit.location.column + 1 });
  }
  return compileFailed(place(first?.text ?? 'the build failed'));
}
