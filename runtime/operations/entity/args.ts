import { NO_ARGS, type EntityArgs } from '../../entities/entity-args.js';
import type { OperationContext } from '../types.js';

/** The entity operation's arguments (none when the protocol sent none). */
export const argsOf = (ctx: OperationContext): EntityArgs => ctx.inv.args ?? NO_ARGS;
