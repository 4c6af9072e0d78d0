/** Reads a streaming response (SSE) to its end in the background: what arrived so far, and whether it ended. */
export interface CollectedBody {
  readonly text: string;
  /** true once the server ended the stream; false if reading failed (e.g. the test aborted it). */
  readonly ended: Promise<boolean>;
}

export function collectBody(res: Response): CollectedBody {
  const reader = res.body!.getReader();
  let text = '';
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      text += Buffer.from(value).toString('utf8');
    }
  })().catch(() => false);
  return { get text() { return text; }, ended };
}
