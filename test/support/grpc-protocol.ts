/**
 * The differential suite's `Order` operations over gRPC (CONTRACT: gRPC),
 * with the stock @grpc/grpc-js client and the proto the server serves:
 * messages in snake_case become REST's camelCase rows, Timestamps REST's ISO
 * instants, unset optional fields null; a failed call's refusal is its
 * `x-service-code` and `x-service-reason-code` trailers.
 */
import type * as grpc from '@grpc/grpc-js';
import { clientOf, fetchProto, isoOf, loadProto, metadata, serviceTrailers, timestampOf, unary } from '../grpc/support.js';
import { Client } from './client.js';
import type { Answer, ListCall, Protocol, Row } from './protocols.js';
import type { TestServer } from './server.js';

const TIMESTAMPS = new Set(['placed_at', 'created_at', 'updated_at']);
const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function rowOf(message: Record<string, unknown>): Row {
  return Object.fromEntries(Object.entries(message).map(([k, v]) => [camel(k), TIMESTAMPS.has(k) ? isoOf(v as { seconds: string }) : v]));
}

function inputOf(row: Row): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => {
    const name = snake(k);
    return [name, TIMESTAMPS.has(name) && typeof v === 'string' ? timestampOf(v) : v];
  }));
}

export async function grpcProtocol(server: TestServer, token: string, tenant: string, project: string): Promise<Protocol> {
  const http = new Client(server.url, { token, tenant, project });
  const pkg = loadProto(await fetchProto(http));
  const orders = clientOf(pkg, 'OrderService', server.node.grpcPort);
  const md = (): grpc.Metadata => metadata(token, tenant, project);
  const call = async <T>(method: string, request: unknown, pick: (value: any) => T): Promise<Answer<T>> => {
    const out = await unary(orders, method, request, md());
    if (out.error !== null) {
      const t = serviceTrailers(out.trailers);
      return { refused: { code: t.code, reasonCode: t.reasonCode } };
    }
    return pick(out.value);
  };
  return {
    name: 'gRPC',
    list: (c: ListCall) => call('List', {
      page_size: c.pageSize, page_token: c.cursor ?? '', filter: c.filter === null ? '' : JSON.stringify(c.filter), sort: c.sort, include_total: c.includeTotal === true,
    }, (v) => ({
      rows: (v.items ?? []).map(rowOf), next: v.next_page_token ? v.next_page_token : null,
      // proto3 leaves a zero int32 unset: with include_total a missing count is 0.
      total: c.includeTotal === true ? Number(v.total_count ?? 0) : null,
    })),
    get: (id) => call('Get', { id }, rowOf),
    create: (input) => call('Create', { order: inputOf(input) }, rowOf),
    update: (id, input, ifMatch) => call('Update', { id, order: inputOf(input), if_match: ifMatch ?? '' }, rowOf),
    remove: (id) => call('Delete', { id }, (v) => ({ id: v.id, deleted: v.deleted })),
    close: async () => orders.close(),
  };
}
