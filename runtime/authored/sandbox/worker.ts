/**
 * The piscina worker of the sandbox pool: runs one invocation at a time
 * (invocation.ts). The engine of the default 64 MiB cap is made when the
 * thread starts, and warmed up (warm-up.ts), so a first invocation does not
 * pay for either.
 */
import { engineFor } from './engine.js';
import { runInvocation } from './invocation.js';
import type { SandboxResult, SandboxTask } from './protocol.js';
import { warmUp } from './warm-up.js';

await engineFor(64);
await warmUp();

export default function run(task: SandboxTask): Promise<SandboxResult> {
  return runInvocation(task);
}
