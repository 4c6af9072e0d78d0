import type { CompiledEntity } from '../entities/compiled-entity.js';
import { GENERATED_NUMBERS, PROTO_TYPE, type EntityNumbers } from './field-numbers.js';
import type { GrpcOperationRef } from './operation-names.js';
import { GRPC_METHODS, grpcEntityNames, PROTO_PACKAGE, snakeCase, type GrpcMethodName } from './names.js';

/** One field of a generated message. `type` is a scalar, a well-known type's full name, or a message of the file. */
export interface ProtoField {
  name: string;
  number: number;
  type: string;
  /** proto3 `optional` (explicit presence). */
  optional: boolean;
  repeated: boolean;
}

export interface ProtoMessage {
  name: string;
  fields: ProtoField[];
  reservedNumbers: readonly number[];
  reservedNames: readonly string[];
}

export interface ProtoMethod {
  /** An entity method, or an authored operation's (`Approve`). */
  name: string;
  /** A message of the file, or a well-known type's full name (`google.protobuf.Struct`). */
  input: string;
  output: string;
  clientStreaming: boolean;
  serverStreaming: boolean;
}

export interface ProtoService {
  name: string;
  methods: ProtoMethod[];
}

/** The project's proto3 file as data: rendered to text (proto-text.ts) and to a FileDescriptorProto (descriptor.ts). */
export interface ProtoFile {
  package: string;
  imports: string[];
  messages: ProtoMessage[];
  services: ProtoService[];
}

export const WELL_KNOWN_IMPORTS = ['google/protobuf/field_mask.proto', 'google/protobuf/struct.proto', 'google/protobuf/timestamp.proto'];

const f = (name: string, number: number, type: string, optional = false, repeated = false): ProtoField => ({ name, number, type, optional, repeated });
const message = (name: string, fields: ProtoField[]): ProtoMessage => ({ name, fields, reservedNumbers: [], reservedNames: [] });

/** The messages and service of one entity (CONTRACT: gRPC fixes every shape and number but the entity's own fields). */
function entityParts(entity: CompiledEntity, numbering: EntityNumbers): { messages: ProtoMessage[]; service: ProtoService } {
  const n = grpcEntityNames(entity.entityName);
  const userFields = entity.userFields.map((d) => f(snakeCase(d.name), numbering.numbers.get(d.name)!, PROTO_TYPE[d.type], d.nullable));
  const reservedNames = numbering.reservedNames.map(snakeCase);
  const row: ProtoMessage = {
    name: n.message,
    fields: [
      f('id', GENERATED_NUMBERS.id, 'string'),
      ...userFields,
      f('created_at', GENERATED_NUMBERS.created_at, 'google.protobuf.Timestamp'),
      f('updated_at', GENERATED_NUMBERS.updated_at, 'google.protobuf.Timestamp'),
      f('concurrency_token', GENERATED_NUMBERS.concurrency_token, 'string'),
    ].sort((a, b) => a.number - b.number),
    reservedNumbers: numbering.reservedNumbers,
    reservedNames,
  };
  // The input has the writable fields only, each optional, under the same numbers as in the row message.
  const input: ProtoMessage = { name: n.input, fields: userFields.map((x) => ({ ...x, optional: true })), reservedNumbers: numbering.reservedNumbers, reservedNames };
  const messages = [
    row,
    input,
    message(n.getRequest, [f('id', 1, 'string')]),
    message(n.listRequest, [f('page_size', 1, 'int32'), f('page_token', 2, 'string'), f('filter', 3, 'string'), f('sort', 4, 'string'), f('include_total', 5, 'bool')]),
    message(n.listResponse, [f('items', 1, n.message, false, true), f('next_page_token', 2, 'string'), f('total_count', 3, 'int32')]),
    message(n.createRequest, [f(snakeCase(lowerFirst(entity.entityName)), 1, n.input), f('idempotency_key', 2, 'string')]),
    message(n.updateRequest, [f('id', 1, 'string'), f(snakeCase(lowerFirst(entity.entityName)), 2, n.input), f('if_match', 3, 'string'), f('update_mask', 4, 'google.protobuf.FieldMask')]),
    message(n.deleteRequest, [f('id', 1, 'string')]),
    message(n.deleteResponse, [f('id', 1, 'string'), f('deleted', 2, 'bool')]),
    message(n.watchRequest, [f('filter', 1, 'string')]),
    message(n.change, [f('kind', 1, 'string'), f('entity_id', 2, 'string'), f('changed_fields', 3, 'string', false, true)]),
    message(n.batchResponse, [f('items', 1, n.message, false, true)]),
  ];
  const io: Record<GrpcMethodName, [string, string]> = {
    Get: [n.getRequest, n.message], List: [n.listRequest, n.listResponse], Create: [n.createRequest, n.message],
    Update: [n.updateRequest, n.message], Delete: [n.deleteRequest, n.deleteResponse], StreamList: [n.listRequest, n.message],
    Watch: [n.watchRequest, n.change], BatchCreate: [n.input, n.batchResponse],
  };
  const methods = (Object.keys(GRPC_METHODS) as GrpcMethodName[]).map((name): ProtoMethod => ({
    name, input: io[name][0], output: io[name][1],
    clientStreaming: GRPC_METHODS[name] === 'clientStream', serverStreaming: GRPC_METHODS[name] === 'serverStream',
  }));
  return { messages, service: { name: n.service, methods } };
}

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** The field of Create/UpdateRequest that carries the input: the entity name in snake case (`order`, `order_item`). */
export const inputFieldOf = (entityName: string): string => snakeCase(lowerFirst(entityName));

/** The Struct every authored operation's method takes and answers (CONTRACT "Operations"). */
export const STRUCT = 'google.protobuf.Struct';

/**
 * The project's file: each entity's messages and service, and the authored
 * operations (grpc/operation-names.ts servableGrpcOperations) as unary
 * methods `<Name>(google.protobuf.Struct) returns (google.protobuf.Struct)`,
 * on their entity's service or on `OperationService`.
 */
export function protoFileOf(entities: readonly CompiledEntity[], numberingOf: (e: CompiledEntity) => EntityNumbers, operations: readonly GrpcOperationRef[] = []): ProtoFile {
  const messages: ProtoMessage[] = [];
  const services: ProtoService[] = [];
  for (const e of entities) {
    const parts = entityParts(e, numberingOf(e));
    messages.push(...parts.messages);
    services.push(parts.service);
  }
  for (const ref of operations) {
    let service = services.find((s) => s.name === ref.service);
    if (service === undefined) services.push((service = { name: ref.service, methods: [] }));
    service.methods.push({ name: ref.method, input: STRUCT, output: STRUCT, clientStreaming: false, serverStreaming: false });
  }
  return { package: PROTO_PACKAGE, imports: WELL_KNOWN_IMPORTS, messages, services };
}
