/** The sandbox pool authored code runs in (CONTRACT "Sandbox and limits"). */
export { createSandboxPool, type SandboxPoolOptions } from './pool.js';
export { MAX_HOST_CALLS, MAX_HOST_CALLS_IN_FLIGHT } from './protocol.js';
