import { call, expectStatus as expect } from '../http-call.js';

/**
 * The handlers the authored-code bench publishes (issue 24 "Benchmark"): a no-op operation
 * (`return input`), one that reads one row through `ctx.db`, and an EdgeHandler that spins
 * forever (its 50 ms CPU limit stops it).
 */
export const BENCH_HANDLERS = {
  noop: { path: 'bench/noop.ts', source: 'export default async function (ctx: unknown, input: unknown) { return input; }\n', surface: 'CoreHandler' },
  readOne: {
    path: 'bench/read-one.ts',
    source: 'export default async function (ctx: any, input: { id: string }) {\n  const row = await ctx.db.orders.get(input.id);\n  return row.data;\n}\n',
    surface: 'CoreHandler',
  },
  spin: { path: 'bench/spin.js', source: 'export default async function () { for (;;) {} }\n', surface: 'EdgeHandler' },
} as const;

export type BenchHandler = keyof typeof BENCH_HANDLERS;

const INPUT_SCHEMAS: Record<BenchHandler, Record<string, unknown>> = {
  noop: { type: 'object' },
  readOne: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  spin: { type: 'object' },
};

/** Writes a source file (creating or replacing it) through /api/SourceAsset. */
export async function putSource(url: string, headers: Record<string, string>, path: string, content: string): Promise<void> {
  const found = await call('GET', `${url}/api/SourceAsset/file/by-path?path=${encodeURIComponent(path)}`, headers);
  if (found.status === 200) {
    const id = (found.body as { data: { id: string } }).data.id;
    expect(`update ${path}`, await call('PUT', `${url}/api/SourceAsset/file/${id}/content`, headers, { content }), 200);
    return;
  }
  expect(`create ${path}`, await call('POST', `${url}/api/SourceAsset/file`, headers, { path, content }), 201);
}

/** Declares (POST) or re-pins (PUT) a handler that is also a project operation of the same name. */
export async function declareHandler(url: string, headers: Record<string, string>, name: string, surface: string, source: string, input: Record<string, unknown>, again = false): Promise<void> {
  const body = { name, surface, source, operation: { input } };
  const a = again ? await call('PUT', `${url}/api/Schema/handlers/${name}`, headers, body) : await call('POST', `${url}/api/Schema/handlers`, headers, body);
  expect(`${again ? 're-pin' : 'declare'} ${name}`, a, again ? 200 : 201);
}

/** Publishes the three bench handlers and grants `subjectId` the right to invoke them. */
export async function publishBenchHandlers(url: string, headers: Record<string, string>, projectId: string, subjectId: string): Promise<void> {
  for (const [name, h] of Object.entries(BENCH_HANDLERS) as Array<[BenchHandler, (typeof BENCH_HANDLERS)[BenchHandler]]>) {
    await putSource(url, headers, h.path, h.source);
    await declareHandler(url, headers, name, h.surface, h.path, INPUT_SCHEMAS[name]);
    expect(`grant ${name}`, await call('POST', `${url}/api/projects/${projectId}/capability-grants`, headers, { subjectId, grant: `operation:${name}:invoke` }), 201);
  }
}
