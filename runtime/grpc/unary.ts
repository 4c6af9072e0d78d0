import { validationFailed } from '../errors/service-error.js';
import type { EntityArgs } from '../entities/entity-args.js';
import type { Page } from '../operations/envelopes.js';
import { decodeMessage, encodeMessage } from './decode.js';
import { dataOf, dispatchEntity, type CallContext } from './entity-call.js';
import { GRPC_METHOD_CAPABILITIES } from './names.js';
import { inputFieldOf } from './proto-model.js';
import { bodyOfInput, fieldMapsOf, messageOfRow, type Message } from './values.js';

type Row = Record<string, unknown>;

const str = (m: Message, key: string): string => (typeof m[key] === 'string' ? (m[key] as string) : '');

/** ListOrdersRequest → the List operation's arguments (CONTRACT: gRPC: `filter` and `sort` are REST's values verbatim). */
export function listArgsOf(m: Message, pageSize?: number): EntityArgs {
  const args: Record<string, string> = {};
  const size = pageSize ?? (typeof m.page_size === 'number' ? m.page_size : 0);
  if (size !== 0) args.pageSize = String(size);
  const token = str(m, 'page_token');
  if (token !== '') args.cursor = token;
  const filter = str(m, 'filter');
  if (filter !== '') args.filter = filter;
  const sort = str(m, 'sort');
  if (sort !== '') args.sort = sort;
  if (m.include_total === true) args.includeTotal = 'true';
  return args;
}

/** The REST field names an update mask lists (proto or REST spelling); an unknown path is INVALID_ARGUMENT. */
function maskFields(cc: CallContext, mask: Message | undefined): Set<string> | null {
  const paths = (mask?.paths ?? []) as string[];
  if (mask === undefined || paths.length === 0) return null;
  const entity = cc.types.entity;
  const maps = fieldMapsOf(entity);
  const out = new Set<string>();
  for (const p of paths) {
    const m = maps.find((x) => x.proto === p || x.rest === p);
    if (m === undefined) throw validationFailed(`${entity.entityName}Validation.UnknownField`, `update_mask names unknown field '${String(p).slice(0, 100)}'`, 'update_mask');
    out.add(m.rest);
  }
  return out;
}

/** Runs a unary method: decode, dispatch its REST twin, encode the answer. */
export async function runUnary(cc: CallContext, method: 'Get' | 'List' | 'Create' | 'Update' | 'Delete', request: Uint8Array): Promise<Uint8Array> {
  const t = cc.types;
  const entity = t.entity;
  switch (method) {
    case 'Get': {
      const m = decodeMessage(t.getRequest, request);
      const row = dataOf<Row>(await dispatchEntity(cc, GRPC_METHOD_CAPABILITIES.Get, { params: { id: str(m, 'id') } }));
      return encodeMessage(t.row, messageOfRow(entity, row));
    }
    case 'List': {
      const m = decodeMessage(t.listRequest, request);
      const result = await dispatchEntity(cc, GRPC_METHOD_CAPABILITIES.List, { args: listArgsOf(m) });
      const body = result.body as { data: Row[]; page: Page };
      const out: Message = { items: body.data.map((r) => messageOfRow(entity, r)) };
      if (body.page.next !== undefined) out.next_page_token = body.page.next;
      if (body.page.totalCount !== undefined) out.total_count = body.page.totalCount;
      return encodeMessage(t.listResponse, out);
    }
    case 'Create': {
      const m = decodeMessage(t.createRequest, request);
      const key = str(m, 'idempotency_key');
      const body = bodyOfInput(entity, m[inputFieldOf(entity.entityName)] as Message | undefined);
      const row = dataOf<Row>(await dispatchEntity(cc, GRPC_METHOD_CAPABILITIES.Create, { body, idempotencyKey: key === '' ? null : key }));
      return encodeMessage(t.row, messageOfRow(entity, row));
    }
    case 'Update': {
      const m = decodeMessage(t.updateRequest, request);
      const mask = maskFields(cc, m.update_mask as Message | undefined);
      const input = m[inputFieldOf(entity.entityName)] as Message | undefined;
      let body = bodyOfInput(entity, input, mask ?? undefined);
      // With a mask only the listed paths change, whatever else the message sets.
      if (mask !== null) body = Object.fromEntries(Object.entries(body).filter(([k]) => mask.has(k)));
      const ifMatch = str(m, 'if_match');
      const row = dataOf<Row>(await dispatchEntity(cc, GRPC_METHOD_CAPABILITIES.Update, { params: { id: str(m, 'id') }, body, ifMatch: ifMatch === '' ? null : ifMatch }));
      return encodeMessage(t.row, messageOfRow(entity, row));
    }
    case 'Delete': {
      const m = decodeMessage(t.deleteRequest, request);
      const id = str(m, 'id');
      await dispatchEntity(cc, GRPC_METHOD_CAPABILITIES.Delete, { params: { id } });
      return encodeMessage(t.deleteResponse, { id, deleted: true });
    }
  }
}
