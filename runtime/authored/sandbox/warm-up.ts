/**
 * Runs a few invocations when a worker starts, so its first real one does not
 * pay for the engine's code being compiled and tiered up (V8 compiles wasm
 * lazily): measured, the first invocation on a fresh module took ~50–80 ms of
 * engine time and the tenth ~1 ms. The host of these is a MessagePort answered
 * in this thread.
 */
import { MessageChannel } from 'node:worker_threads';
import { DEFAULT_LIMITS } from '../types.js';
import { runInvocation } from './invocation.js';
import type { AnswerMessage, WorkerMessage } from './protocol.js';

const ROUNDS = 12;
const BUNDLE = `var __plinthHandler = (() => ({
  default: async (ctx, input) => {
    const row = await ctx.db.things.get(input.id);
    const [a, b] = await Promise.all([ctx.db.things.count({}), ctx.log.info('warm')]);
    return { row, a, b, n: JSON.parse(JSON.stringify(input)).list.map((x) => x * 2) };
  },
}))();`;

export async function warmUp(): Promise<void> {
  for (let i = 0; i < ROUNDS; i++) {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (m: WorkerMessage) => {
      if (m.kind === 'call') port1.postMessage({ id: m.id, answer: { ok: true, value: { data: { id: m.args[0] } } } } satisfies AnswerMessage);
    });
    await runInvocation({
      code: BUNDLE, exportName: 'default', inputJson: JSON.stringify({ id: String(i), list: [1, 2, 3] }),
      ctx: { surface: 'CoreHandler', actor: { subjectId: null, roles: [], claims: {} }, correlationId: 'warm-up', publicationVersion: 0 },
      limits: DEFAULT_LIMITS.CoreHandler, port: port2,
    });
    port1.close();
  }
  // Once through the interrupt path too, so a first runaway stops as promptly as later ones.
  const { port1, port2 } = new MessageChannel();
  await runInvocation({
    code: 'var __plinthHandler = { default: () => { for (;;) {} } };', exportName: 'default', inputJson: 'null',
    ctx: { surface: 'CoreHandler', actor: { subjectId: null, roles: [], claims: {} }, correlationId: 'warm-up', publicationVersion: 0 },
    limits: { ...DEFAULT_LIMITS.CoreHandler, cpuMs: 5 }, port: port2,
  });
  port1.close();
}
