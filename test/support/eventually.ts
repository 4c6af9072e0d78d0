import type { Reply } from './client.js';

/** Retries `attempt` every 100 ms until `ok` holds or `ms` passed, and returns the last reply (the caller asserts on it). */
export async function eventually(attempt: () => Promise<Reply>, ok: (r: Reply) => boolean, ms = 6_000): Promise<Reply> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await attempt();
    if (ok(r) || Date.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}
