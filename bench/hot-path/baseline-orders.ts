/**
 * The bare baseline of issue 9 on node:http: baseline-handler.ts's answers behind Node's own
 * HTTP server. Env: PORT, HOST and baseline-handler.ts's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { handle, pool, type Answer } from './baseline-handler.js';

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, a: Answer): void {
  res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(a.json), ...a.headers });
  res.end(a.json);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://baseline');
  handle(req.method ?? 'GET', url.pathname, url.searchParams, () => readBody(req))
    .then((a) => {
      req.resume();
      send(res, a);
    })
    .catch((err: unknown) => {
      console.error('baseline-orders:', (err as Error).message);
      if (!res.headersSent) send(res, { status: 500, json: '{"error":{"code":"INTERNAL"}}', headers: {} });
      else res.destroy();
    });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => console.log('baseline-orders listening'));

function shutdown(): void {
  server.close(() => void pool.end().finally(() => process.exit(0)));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 3_000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
