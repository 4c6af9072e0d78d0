import protobuf from 'protobufjs';
import type { SqlExecutor } from '../../storage/index.js';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import { fileDescriptors } from './descriptor.js';
import { grpcEntityNames, PROTO_PACKAGE, servableGrpcEntities, type GrpcEntityNames } from './names.js';
import { protoFileOf, STRUCT, WELL_KNOWN_IMPORTS, type ProtoFile } from './proto-model.js';
import { grpcOperationRef, servableGrpcOperations } from './operation-names.js';
import type { AuthoredOperation } from '../publication/authored-operations.js';
import { protoText } from './proto-text.js';
import { numberingOf } from './publication-history.js';

/** The protobufjs types one entity's calls are decoded and encoded with. */
export interface GrpcEntityTypes {
  entity: CompiledEntity;
  names: GrpcEntityNames;
  row: protobuf.Type;
  input: protobuf.Type;
  getRequest: protobuf.Type;
  listRequest: protobuf.Type;
  listResponse: protobuf.Type;
  createRequest: protobuf.Type;
  updateRequest: protobuf.Type;
  deleteRequest: protobuf.Type;
  deleteResponse: protobuf.Type;
  watchRequest: protobuf.Type;
  change: protobuf.Type;
  batchResponse: protobuf.Type;
}

/** A publication's gRPC projection, compiled once per publication per node. */
export interface GrpcSchema {
  version: number;
  file: ProtoFile;
  /** The proto3 text served at `GET /grpc/proto/service-app.proto`. */
  text: string;
  /** `OrderService` → its entity's types. */
  services: ReadonlyMap<string, GrpcEntityTypes>;
  /** `OrderService/Approve`, `OperationService/Recalculate` → the authored operation the method runs. */
  operations: ReadonlyMap<string, AuthoredOperation>;
  /** google.protobuf.Struct: what an operation's method takes and answers. */
  struct: protobuf.Type;
  /** Encoded FileDescriptorProtos: the project file first, then its imports (reflection). */
  descriptors: { name: string; files: Uint8Array[] };
  /** Fully qualified symbols of the project file (services, methods, messages, fields) for reflection. */
  symbols: ReadonlySet<string>;
}

/** The well-known types the file imports, loaded once for every Root. */
const WELL_KNOWN_JSON = WELL_KNOWN_IMPORTS.map((f) => protobuf.common.get(f)!);

function buildRoot(text: string): protobuf.Root {
  const root = new protobuf.Root();
  for (const json of WELL_KNOWN_JSON) root.addJSON(json.nested!);
  protobuf.parse(text, root, { keepCase: true });
  root.resolveAll();
  return root;
}

function symbolsOf(file: ProtoFile): Set<string> {
  const out = new Set<string>();
  const p = file.package;
  for (const s of file.services) {
    out.add(`${p}.${s.name}`);
    for (const m of s.methods) out.add(`${p}.${s.name}.${m.name}`);
  }
  for (const m of file.messages) {
    out.add(`${p}.${m.name}`);
    for (const x of m.fields) out.add(`${p}.${m.name}.${x.name}`);
  }
  return out;
}

async function compile(db: SqlExecutor, pub: CompiledPublication): Promise<GrpcSchema> {
  const numbering = await numberingOf(db, pub.record);
  const entities = servableGrpcEntities(pub.entities.values()).kept;
  const ops = servableGrpcOperations(pub.authoredOperations, entities.map((e) => e.entityName));
  const file = protoFileOf(entities, (e) => numbering.of(e.entityName, e.userFields), ops.map(grpcOperationRef));
  const text = protoText(file, `Plinth gRPC projection of publication ${pub.version} (CONTRACT: gRPC). Field numbers are stable across publications.`);
  const root = buildRoot(text);
  const type = (name: string): protobuf.Type => root.lookupType(`${PROTO_PACKAGE}.${name}`);
  const services = new Map<string, GrpcEntityTypes>();
  for (const entity of entities) {
    const names = grpcEntityNames(entity.entityName);
    services.set(names.service, {
      entity, names,
      row: type(names.message), input: type(names.input), getRequest: type(names.getRequest), listRequest: type(names.listRequest),
      listResponse: type(names.listResponse), createRequest: type(names.createRequest), updateRequest: type(names.updateRequest),
      deleteRequest: type(names.deleteRequest), deleteResponse: type(names.deleteResponse), watchRequest: type(names.watchRequest),
      change: type(names.change), batchResponse: type(names.batchResponse),
    });
  }
  const operations = new Map(ops.map((op) => {
    const ref = grpcOperationRef(op);
    return [`${ref.service}/${ref.method}`, op] as const;
  }));
  return { version: pub.version, file, text, services, operations, struct: root.lookupType(STRUCT), descriptors: fileDescriptors(file), symbols: symbolsOf(file) };
}

const compiled = new WeakMap<CompiledPublication, Promise<GrpcSchema>>();

/**
 * The gRPC schema of a publication: compiled on first use (it reads the
 * branch's publication history for the field numbers), then shared by every
 * call pinned to it. A failed compile is not cached, so the next call retries.
 */
export function grpcSchemaOf(db: SqlExecutor, pub: CompiledPublication): Promise<GrpcSchema> {
  let hit = compiled.get(pub);
  if (hit === undefined) {
    hit = compile(db, pub);
    compiled.set(pub, hit);
    hit.catch(() => compiled.delete(pub));
  }
  return hit;
}
