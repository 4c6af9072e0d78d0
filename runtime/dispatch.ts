import { ANONYMOUS, type Invocation } from './operations/types.js';
import { authenticate } from './pipeline/authenticate.js';
import { resolveScope } from './pipeline/resolve-scope.js';
import { refuseUnstorableInput } from './pipeline/storable-input.js';
import type { Services } from './services.js';
import { authorizeAndExecute, failedOutcome, newContext, type Outcome } from './dispatch-stages.js';

export type { Outcome } from './dispatch-stages.js';

/**
 * The one entry point: every protocol's request passes the six pipeline
 * stages in order, then the operation's executor. A request is allowed only
 * when every stage agrees. Failures come back as declared ServiceErrors;
 * anything undeclared is masked as INTERNAL here. Stages 3 to 6 are
 * dispatch-stages.ts's, shared with the nested calls of authored handlers.
 */
export async function dispatch(inv: Invocation, services: Services): Promise<Outcome> {
  const ctx = newContext(inv, services, ANONYMOUS, null);
  try {
    // Text PostgreSQL cannot store (U+0000, lone surrogates) is refused for every protocol here, before any stage reads it.
    refuseUnstorableInput(inv);
    ctx.actor = await authenticate(ctx); // 1
    ctx.trace.stage = 2;
    ctx.scope = await resolveScope(ctx);
    return await authorizeAndExecute(ctx);
  } catch (err) {
    return failedOutcome(ctx, err);
  }
}
