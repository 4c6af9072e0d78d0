import type { MeteringDecl } from './types.js';

/** Control-plane calls count toward no windowed quota (CONTRACT: Usage and quotas meters data, deliveries and runs). */
export const CONTROL_PLANE_UNMETERED: MeteringDecl = { unit: 'none', why: 'control plane: metered data, deliveries and runs only' };

/** Error statuses of an admin route without a body, and with one (a body can be malformed, too large or invalid). */
export const READ_ERRORS: readonly number[] = [400, 401, 403, 404, 422];
export const WRITE_ERRORS: readonly number[] = [400, 401, 403, 404, 409, 413, 422];
