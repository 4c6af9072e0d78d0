import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { dispatch } from '../../runtime/dispatch.js';
import { maskError } from '../../runtime/errors/mask.js';
import { reflectionAnswer, type ReflectionRequest } from '../../runtime/grpc/reflection.js';
import type { GrpcSchema } from '../../runtime/grpc/schema.js';
import { grpcStatusOf, GrpcCode } from '../../runtime/grpc/status.js';
import { GRPC_REFLECT_SPEC } from '../../runtime/operations/grpc/proto.js';
import type { Services } from '../../runtime/services.js';
import { passThrough, type MethodHandler } from './entity-calls.js';
import { invocationOf, serviceErrorOf } from './metadata.js';

/** The reflection protos shipped with @grpc/reflection (v1 and v1alpha differ only in their package). */
const PROTO_DIR = join(dirname(createRequire(import.meta.url).resolve('@grpc/reflection')), '..', 'proto', 'grpc', 'reflection');

interface ReflectionTypes {
  request: protobuf.Type;
  response: protobuf.Type;
}

function typesOf(version: 'v1' | 'v1alpha'): ReflectionTypes {
  const root = new protobuf.Root().loadSync(join(PROTO_DIR, version, 'reflection.proto'), { keepCase: true });
  return {
    request: root.lookupType(`grpc.reflection.${version}.ServerReflectionRequest`),
    response: root.lookupType(`grpc.reflection.${version}.ServerReflectionResponse`),
  };
}

/** Requests answered per reflection stream: a client asks a handful; more is abuse. */
const MAX_REQUESTS_PER_STREAM = 10_000;

/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`), answered per
 * project (CONTRACT: gRPC): the stream's metadata is authenticated and
 * scoped once, by `Discovery.Grpc.Reflection` (without a credential:
 * UNAUTHENTICATED), and every request is answered from that project's gRPC
 * schema, so grpcurl and Postman see the caller's services only.
 */
export function reflectionHandlers(services: Services): MethodHandler[] {
  return (['v1', 'v1alpha'] as const).map((version) => {
    const types = typesOf(version);
    const path = `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`;
    const func = (call: grpc.ServerDuplexStream<Buffer, Buffer>): void => {
      let schema: Promise<GrpcSchema> | null = null;
      let count = 0;
      let failed = false;
      const inv = invocationOf(GRPC_REFLECT_SPEC, call.metadata, call.getPeer(), undefined);
      const fail = (err: unknown): void => {
        if (failed) return;
        failed = true;
        const error = maskError(err, inv.correlationId, services.log);
        call.emit('error', serviceErrorOf(grpcStatusOf(error, inv.correlationId)));
      };
      // Answers are written in request order: each waits for the schema, which resolves once.
      let chain = Promise.resolve();
      call.on('data', (bytes: Buffer) => {
        if (failed) return;
        if (++count > MAX_REQUESTS_PER_STREAM) {
          failed = true;
          call.emit('error', { code: GrpcCode.RESOURCE_EXHAUSTED, details: 'too many reflection requests on one stream' });
          return;
        }
        schema ??= dispatch(inv, services).then((out) => {
          if (!out.ok) throw out.error;
          return out.result.body as GrpcSchema;
        });
        chain = chain.then(async () => {
          let req: ReflectionRequest;
          try {
            req = types.request.toObject(types.request.decode(bytes), { oneofs: false }) as ReflectionRequest;
          } catch {
            failed = true;
            call.emit('error', { code: GrpcCode.INVALID_ARGUMENT, details: 'malformed ServerReflectionRequest' });
            return;
          }
          const s = await schema!;
          if (failed || call.cancelled) return;
          const answer = reflectionAnswer(s, req);
          call.write(Buffer.from(types.response.encode(types.response.fromObject(answer)).finish()));
        }).catch(fail);
      });
      call.on('end', () => {
        void chain.then(() => {
          if (!failed && !call.cancelled) call.end();
        });
      });
      call.on('error', () => {});
    };
    return { func, serialize: passThrough, deserialize: passThrough, type: 'bidi' as const, path };
  });
}
