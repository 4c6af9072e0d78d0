/** Helpers of the source-asset suites: a project client, raw-byte requests and a raw socket for oversized bodies. */
import net from 'node:net';
import type { Client } from '../support/client.js';

/** A request with a byte body (not JSON) through fetch, with the client's scope headers. */
export async function sendBytes(c: Client, method: string, path: string, bytes: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any; bytes: Buffer }> {
  const h: Record<string, string> = { 'content-type': 'application/octet-stream', ...headers };
  if (c.scope.token != null) h.authorization = `Bearer ${c.scope.token}`;
  if (c.scope.tenant !== undefined) h['x-service-tenant'] = c.scope.tenant;
  if (c.scope.project !== undefined) h['x-service-project'] = c.scope.project;
  if (c.scope.branch !== undefined) h['x-service-branch'] = c.scope.branch;
  const res = await fetch(c.baseUrl + path, { method, headers: h, ...(method === 'GET' ? {} : { body: new Uint8Array(bytes) }) });
  const out = Buffer.from(await res.arrayBuffer());
  const json = (res.headers.get('content-type') ?? '').includes('json') && out.length > 0 ? JSON.parse(out.toString('utf8')) : undefined;
  return { status: res.status, headers: res.headers, body: json, bytes: out };
}

export const download = (c: Client, id: string, headers: Record<string, string> = {}) => sendBytes(c, 'GET', `/api/SourceAsset/file/${id}/download`, Buffer.alloc(0), headers);

/**
 * Writes a request head (and optionally a body, chunked) on a raw socket and resolves with
 * the first response's status line and body text, so no client library refuses or rewrites it.
 */
export function rawRequest(baseUrl: string, head: string, chunks: Buffer[] = []): Promise<{ status: number; text: string }> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let text = '';
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`no answer: ${text.slice(0, 200)}`)); }, 10_000);
    const done = (): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ status: Number(text.slice(9, 12)), text });
    };
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const len = /content-length: *(\d+)/i.exec(text.slice(0, end));
      if (len !== null && text.length >= end + 4 + Number(len[1])) done();
    });
    sock.on('error', () => { if (text !== '') done(); });
    sock.on('close', () => { if (text !== '') done(); });
    sock.write(head);
    for (const c of chunks) sock.write(`${c.length.toString(16)}\r\n`), sock.write(c), sock.write('\r\n');
    if (chunks.length > 0) sock.write('0\r\n\r\n');
  });
}

/** The head of a request with the client's scope headers. */
export function requestHead(c: Client, method: string, path: string, extra: string[]): string {
  const u = new URL(c.baseUrl);
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${u.host}`, `Authorization: Bearer ${c.scope.token}`, `X-Service-Tenant: ${c.scope.tenant}`, `X-Service-Project: ${c.scope.project}`, ...extra];
  return `${lines.join('\r\n')}\r\n\r\n`;
}
