import { HTTP_STATUS } from '../errors/codes.js';
import { ServiceError } from '../errors/service-error.js';
import type { HostAnswer } from './types.js';

/** A host call's refusal as the sandbox sees it (a rejected promise carrying code, reasonCode, message, status). */
export function refused(err: ServiceError): HostAnswer {
  const field = err.details.field;
  return {
    ok: false,
    error: { code: err.code, reasonCode: err.reasonCode, message: err.message, status: HTTP_STATUS[err.code], ...(field === undefined ? {} : { field }) },
  };
}

/** Runs a host target: a ServiceError becomes the sandbox's refusal; anything else is a platform fault and propagates. */
export async function answering(run: () => Promise<unknown>): Promise<HostAnswer> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    if (ServiceError.is(err)) return refused(err);
    throw err;
  }
}
