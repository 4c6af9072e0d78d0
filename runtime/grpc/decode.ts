import type protobuf from 'protobufjs';
import { validationFailed } from '../errors/service-error.js';
import type { Message } from './values.js';

/**
 * Decodes a request message; bytes that are no message of the type
 * (truncated, wrong wire types, nesting too deep) are INVALID_ARGUMENT,
 * never an internal error.
 */
export function decodeMessage(type: protobuf.Type, bytes: Uint8Array): Message {
  try {
    return type.decode(bytes) as unknown as Message;
  } catch (err) {
    const why = err instanceof Error ? err.message.slice(0, 200) : 'undecodable';
    throw validationFailed('Grpc.MalformedMessage', `the request is not a valid ${type.name} message: ${why}`);
  }
}

export const encodeMessage = (type: protobuf.Type, value: Message): Uint8Array => type.encode(value as unknown as protobuf.Message).finish();
