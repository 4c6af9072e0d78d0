import type { OperationContext, ResultStream } from '../operations/types.js';
import { streamActorOf } from './stream-slots.js';

/**
 * Runs `start` under one of the node's stream slots (per actor, per node;
 * 429 QUOTA_EXCEEDED before anything runs when none is free) and answers
 * its stream, which gives the slot back when it ends however it ends: the
 * client left, the producer ended, the server stopped, or it never opened.
 */
export async function slottedStream(ctx: OperationContext, start: () => Promise<ResultStream>): Promise<ResultStream> {
  const release = ctx.services.streams.slots.take({ projectId: ctx.scope!.project.id, actor: streamActorOf(ctx.actor) }, 'stream');
  let stream: ResultStream;
  try {
    stream = await start();
  } catch (err) {
    release();
    throw err;
  }
  return {
    open: (sink) => {
      let close: () => void;
      try {
        close = stream.open(sink);
      } catch (err) {
        release();
        throw err;
      }
      return () => {
        release();
        close();
      };
    },
    discard: () => {
      release();
      stream.discard?.();
    },
  };
}
