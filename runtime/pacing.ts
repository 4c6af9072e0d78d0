/**
 * Pacing of work whose statements run in the node's own thread (PGlite: the
 * database is WebAssembly in this process, one connection). While such
 * work runs, nothing else does: not another tenant's statement, not its
 * request's parsing or answer. So work that comes back again and again (a
 * GraphQL request's root fields, a StreamList's pages) pauses after each
 * step as long as that step took, and holds the thread at most about half
 * of the time; another tenant's request waits for at most one step.
 */

/** Longest pause after one step: a step that took longer is already over its share, and a longer pause only slows it without helping anyone. */
export const MAX_PACE_MS = 100;

/** The pause after a step that took `ms`: as long as it took, at most MAX_PACE_MS. */
export const paceAfter = (ms: number): number => Math.min(Math.max(0, ms), MAX_PACE_MS);
