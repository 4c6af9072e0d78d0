/**
 * gRPC test helpers: the stock @grpc/grpc-js client with @grpc/proto-loader
 * loading the proto text the server serves at `GET /grpc/proto/service-app.proto`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Client } from '../support/client.js';

/** proto-loader options a typical Node client uses: snake_case as declared, int64 and enums as strings. */
export const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true };

export async function fetchProto(client: Client): Promise<string> {
  const r = await client.get('/grpc/proto/service-app.proto');
  if (r.status !== 200) throw new Error(`proto: ${r.status} ${r.text}`);
  return r.text;
}

/** Loads proto text through a temp file, as a user saving the served file would. */
export function loadProto(text: string): any {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-proto-'));
  const file = join(dir, 'service-app.proto');
  writeFileSync(file, text);
  try {
    return grpc.loadPackageDefinition(protoLoader.loadSync(file, LOADER_OPTIONS));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function metadata(token: string | null, tenant: string, project: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token !== null) md.set('authorization', `Bearer ${token}`);
  md.set('x-service-tenant', tenant);
  md.set('x-service-project', project);
  return md;
}

export interface UnaryOutcome<T = any> {
  error: (grpc.ServiceError & { metadata: grpc.Metadata }) | null;
  value: T | null;
  trailers: grpc.Metadata | null;
}

/** Calls a unary (or client-streaming, with `write`) method and settles with its value or error and trailing metadata. */
export function unary<T = any>(service: any, method: string, request: unknown, md: grpc.Metadata, options: grpc.CallOptions = {}): Promise<UnaryOutcome<T>> {
  return new Promise((resolve) => {
    let trailers: grpc.Metadata | null = null;
    const call = service[method](request, md, options, (error: any, value: T) => {
      // The status (with trailers) arrives with the callback; wait one turn so 'status' has fired.
      setImmediate(() => resolve({ error, value: value ?? null, trailers: error?.metadata ?? trailers }));
    });
    call.on('status', (s: grpc.StatusObject) => {
      trailers = s.metadata;
    });
  });
}

/** The x-service-* trailers of a failed call. */
export function serviceTrailers(md: grpc.Metadata | null | undefined): { code: string; reasonCode: string; correlationId: string } {
  const get = (k: string): string => String(md?.get(k)[0] ?? '');
  return { code: get('x-service-code'), reasonCode: get('x-service-reason-code'), correlationId: get('x-service-correlation-id') };
}

export function clientOf(pkg: any, serviceName: string, port: number): any {
  const Ctor = pkg.service.app[serviceName];
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** Reads a server stream to its end: the messages and the final status. */
export function collect<T = any>(call: grpc.ClientReadableStream<T>): Promise<{ items: T[]; status: grpc.StatusObject; error: grpc.ServiceError | null }> {
  return new Promise((resolve) => {
    const items: T[] = [];
    let error: grpc.ServiceError | null = null;
    call.on('data', (m: T) => items.push(m));
    call.on('error', (e: grpc.ServiceError) => {
      error = e;
    });
    call.on('status', (status: grpc.StatusObject) => setImmediate(() => resolve({ items, status, error })));
  });
}

/** A Timestamp as proto-loader gives it → ISO with microseconds, REST's form. */
export function isoOf(ts: { seconds: string | number; nanos?: number } | undefined): string | null {
  if (ts === undefined || ts === null) return null;
  const d = new Date(Number(ts.seconds) * 1000).toISOString().slice(0, 19);
  return `${d}.${String(Math.floor((ts.nanos ?? 0) / 1000)).padStart(6, '0')}Z`;
}

export function timestampOf(iso: string): { seconds: number; nanos: number } {
  const ms = Date.parse(iso);
  const frac = /\.(\d+)Z$/.exec(iso)?.[1] ?? '';
  return { seconds: Math.floor(ms / 1000), nanos: Number(frac.padEnd(9, '0').slice(0, 9)) };
}
