/** One JSON call to a server under test, with its status, parsed body and text (the harnesses' setup requests). */
export interface ApiAnswer {
  status: number;
  body: unknown;
  text: string;
}

export async function call(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<ApiAnswer> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

export function expectStatus(what: string, answer: ApiAnswer, status: number): void {
  if (answer.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${answer.status}: ${answer.text.slice(0, 500)}`);
  }
}
