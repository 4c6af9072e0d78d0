/**
 * The fair baseline (issue 29): baseline-handler.ts's answers behind uWebSockets.js, the
 * front end Plinth itself runs on, so a ratio against it measures Plinth's own overhead and
 * not uWS against node:http. The run uses it with prepared statements and Plinth's pool size.
 * Env: PORT, HOST and baseline-handler.ts's.
 */
import uWS from 'uWebSockets.js';
import { handle, pool, takesBody, type Answer } from './baseline-handler.js';

/** The request body, collected as uWS hands it over (its chunks are only valid during the callback). */
function readBody(res: uWS.HttpResponse): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    res.onData((chunk, last) => {
      chunks.push(Buffer.from(chunk.slice(0)));
      if (last) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

function send(res: uWS.HttpResponse, a: Answer, aborted: { value: boolean }): void {
  if (aborted.value) return;
  res.cork(() => {
    res.writeStatus(String(a.status)).writeHeader('content-type', 'application/json');
    for (const [k, v] of Object.entries(a.headers)) res.writeHeader(k, v);
    res.end(a.json);
  });
}

const app = uWS.App().any('/*', (res, req) => {
  const aborted = { value: false };
  res.onAborted(() => { aborted.value = true; });
  const method = req.getCaseSensitiveMethod();
  const path = req.getUrl();
  const search = new URLSearchParams(req.getQuery() ?? '');
  // The body must be attached before this callback returns; only the create route reads one.
  const body = takesBody(method, path) ? readBody(res) : Promise.resolve('');
  handle(method, path, search, () => body).then(
    (a) => send(res, a, aborted),
    (err: unknown) => {
      console.error('baseline-orders-uws:', (err as Error).message);
      send(res, { status: 500, json: '{"error":{"code":"INTERNAL"}}', headers: {} }, aborted);
    },
  );
});

let listenSocket: uWS.us_listen_socket | null = null;
app.listen(process.env.HOST ?? '127.0.0.1', Number(process.env.PORT ?? 0), (socket) => {
  if (!socket) {
    console.error('baseline-orders-uws: could not listen');
    process.exit(1);
  }
  listenSocket = socket;
  console.log('baseline-orders-uws listening');
});

function shutdown(): void {
  if (listenSocket !== null) uWS.us_listen_socket_close(listenSocket);
  void pool.end().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 3_000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
