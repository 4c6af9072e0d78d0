import { wellKnownFile } from './descriptor.js';
import { PROTO_FILE_NAME } from './names.js';
import type { GrpcSchema } from './schema.js';
import { GrpcCode } from './status.js';

/** A ServerReflectionRequest as decoded (snake case, the `message_request` oneof set to one field). */
export interface ReflectionRequest {
  host?: string;
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type?: string; extension_number?: number };
  all_extension_numbers_of_type?: string;
  list_services?: string;
}

const has = (m: object, key: string): boolean => Object.prototype.hasOwnProperty.call(m, key);

const notFound = (message: string): Record<string, unknown> => ({ error_response: { error_code: GrpcCode.NOT_FOUND, error_message: message } });

/**
 * One answer of gRPC server reflection (v1 and v1alpha have the same
 * messages) for the caller's project: its services, and its file with the
 * well-known files it imports. The project declares no extensions.
 */
export function reflectionAnswer(schema: GrpcSchema, req: ReflectionRequest): Record<string, unknown> {
  const base = { valid_host: req.host ?? '', original_request: req };
  const files = { file_descriptor_response: { file_descriptor_proto: schema.descriptors.files } };
  if (has(req, 'list_services')) {
    return { ...base, list_services_response: { service: schema.file.services.map((s) => ({ name: `${schema.file.package}.${s.name}` })) } };
  }
  if (has(req, 'file_containing_symbol')) {
    const symbol = req.file_containing_symbol ?? '';
    if (schema.symbols.has(symbol)) return { ...base, ...files };
    const wk = wellKnownOfSymbol(symbol);
    if (wk !== undefined) return { ...base, file_descriptor_response: { file_descriptor_proto: [wk] } };
    return { ...base, ...notFound(`symbol not found: ${symbol.slice(0, 200)}`) };
  }
  if (has(req, 'file_by_filename')) {
    const name = req.file_by_filename ?? '';
    if (name === PROTO_FILE_NAME) return { ...base, ...files };
    const wk = wellKnownFile(name);
    if (wk !== undefined) return { ...base, file_descriptor_response: { file_descriptor_proto: [wk] } };
    return { ...base, ...notFound(`file not found: ${name.slice(0, 200)}`) };
  }
  if (has(req, 'all_extension_numbers_of_type')) {
    const type = req.all_extension_numbers_of_type ?? '';
    if (schema.symbols.has(type)) return { ...base, all_extension_numbers_response: { base_type_name: type, extension_number: [] } };
    return { ...base, ...notFound(`type not found: ${type.slice(0, 200)}`) };
  }
  if (has(req, 'file_containing_extension')) return { ...base, ...notFound('this project declares no extensions') };
  return { ...base, error_response: { error_code: GrpcCode.UNIMPLEMENTED, error_message: 'unknown reflection request' } };
}

const WELL_KNOWN_SYMBOLS: Record<string, string> = {
  'google.protobuf.Timestamp': 'google/protobuf/timestamp.proto',
  'google.protobuf.FieldMask': 'google/protobuf/field_mask.proto',
  'google.protobuf.Struct': 'google/protobuf/struct.proto',
  'google.protobuf.Value': 'google/protobuf/struct.proto',
  'google.protobuf.ListValue': 'google/protobuf/struct.proto',
  'google.protobuf.NullValue': 'google/protobuf/struct.proto',
};

const wellKnownOfSymbol = (symbol: string): Uint8Array | undefined => {
  const file = WELL_KNOWN_SYMBOLS[symbol];
  return file === undefined ? undefined : wellKnownFile(file);
};
