/**
 * The host calls a sandbox may make (types.ts HostCall): anything else is
 * refused in the worker before it reaches the host. The prelude only builds
 * these, but the handler could call the native function it wraps by other
 * means, so the worker checks again.
 */
import type { HandlerSurface, HostError } from '../types.js';

const NAME = '[A-Za-z_$][A-Za-z0-9_$]{0,127}';
const TARGET = new RegExp(`^(?:db\\.${NAME}\\.(?:list|get|count|create|update|delete)|fetch|log\\.(?:info|warn|error)|platform\\.${NAME}\\.${NAME})$`);

export function refuseTarget(target: string, surface: HandlerSurface): HostError | null {
  if (!TARGET.test(target)) return { code: 'NOT_FOUND', reasonCode: 'Handler.UnknownHostCall', status: 404, message: `no host call ${JSON.stringify(target.slice(0, 200))}` };
  if (target.startsWith('platform.') && surface !== 'ManagementHandler') {
    return { code: 'ACCESS_DENIED', reasonCode: 'Handler.PlatformNotAvailable', status: 403, message: 'ctx.platform is only for a ManagementHandler' };
  }
  return null;
}
