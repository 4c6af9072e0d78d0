import descriptor from 'protobufjs/ext/descriptor/index.js';
import { PROTO_FILE_NAME } from './names.js';
import type { ProtoField, ProtoFile, ProtoMessage } from './proto-model.js';

/** FieldDescriptorProto.Type and Label numbers (google/protobuf/descriptor.proto). */
const TYPE: Record<string, number> = { double: 1, int64: 3, int32: 5, bool: 8, string: 9, message: 11, enum: 14 };
const LABEL_OPTIONAL = 1;
const LABEL_REPEATED = 3;

type FieldDesc = Record<string, unknown>;
type MessageDesc = { name: string; field: FieldDesc[]; oneofDecl?: Array<{ name: string }>; reservedRange?: Array<{ start: number; end: number }>; reservedName?: string[] };

const jsonName = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function fieldDesc(x: ProtoField, pkg: string, oneofIndex: number | null): FieldDesc {
  const scalar = TYPE[x.type];
  const out: FieldDesc = {
    name: x.name, number: x.number, label: x.repeated ? LABEL_REPEATED : LABEL_OPTIONAL, jsonName: jsonName(x.name),
    type: scalar ?? TYPE.message,
  };
  if (scalar === undefined) out.typeName = x.type.includes('.') ? `.${x.type}` : `.${pkg}.${x.type}`;
  if (oneofIndex !== null) {
    out.oneofIndex = oneofIndex;
    out.proto3Optional = true;
  }
  return out;
}

function messageDesc(m: ProtoMessage, pkg: string): MessageDesc {
  const oneofDecl: Array<{ name: string }> = [];
  // protoc gives each proto3 `optional` field a synthetic oneof `_<name>`, declared after the real ones.
  const field = m.fields.map((x) => {
    if (!x.optional) return fieldDesc(x, pkg, null);
    oneofDecl.push({ name: `_${x.name}` });
    return fieldDesc(x, pkg, oneofDecl.length - 1);
  });
  const out: MessageDesc = { name: m.name, field };
  if (oneofDecl.length > 0) out.oneofDecl = oneofDecl;
  if (m.reservedNumbers.length > 0) out.reservedRange = m.reservedNumbers.map((n) => ({ start: n, end: n + 1 }));
  if (m.reservedNames.length > 0) out.reservedName = [...m.reservedNames];
  return out;
}

const encodeFile = (file: Record<string, unknown>): Uint8Array =>
  descriptor.FileDescriptorProto.encode(descriptor.FileDescriptorProto.fromObject(file)).finish();

const scalarField = (name: string, number: number, type: string, repeated = false): ProtoField => ({ name, number, type, optional: false, repeated });

/** The well-known files the project file imports, as protoc describes them (their messages only). */
const WELL_KNOWN: ReadonlyMap<string, Uint8Array> = new Map([
  ['google/protobuf/timestamp.proto', encodeFile({
    name: 'google/protobuf/timestamp.proto', package: 'google.protobuf', syntax: 'proto3',
    messageType: [messageDesc({ name: 'Timestamp', fields: [scalarField('seconds', 1, 'int64'), scalarField('nanos', 2, 'int32')], reservedNumbers: [], reservedNames: [] }, 'google.protobuf')],
  })],
  ['google/protobuf/field_mask.proto', encodeFile({
    name: 'google/protobuf/field_mask.proto', package: 'google.protobuf', syntax: 'proto3',
    messageType: [messageDesc({ name: 'FieldMask', fields: [scalarField('paths', 1, 'string', true)], reservedNumbers: [], reservedNames: [] }, 'google.protobuf')],
  })],
  ['google/protobuf/struct.proto', encodeFile({
    name: 'google/protobuf/struct.proto', package: 'google.protobuf', syntax: 'proto3',
    messageType: [
      {
        name: 'Struct',
        field: [{ name: 'fields', number: 1, label: LABEL_REPEATED, type: TYPE.message, typeName: '.google.protobuf.Struct.FieldsEntry', jsonName: 'fields' }],
        nestedType: [{
          name: 'FieldsEntry', options: { mapEntry: true },
          field: [
            { name: 'key', number: 1, label: LABEL_OPTIONAL, type: TYPE.string, jsonName: 'key' },
            { name: 'value', number: 2, label: LABEL_OPTIONAL, type: TYPE.message, typeName: '.google.protobuf.Value', jsonName: 'value' },
          ],
        }],
      },
      {
        name: 'Value',
        field: [
          { name: 'null_value', number: 1, label: LABEL_OPTIONAL, type: TYPE.enum, typeName: '.google.protobuf.NullValue', oneofIndex: 0, jsonName: 'nullValue' },
          { name: 'number_value', number: 2, label: LABEL_OPTIONAL, type: TYPE.double, oneofIndex: 0, jsonName: 'numberValue' },
          { name: 'string_value', number: 3, label: LABEL_OPTIONAL, type: TYPE.string, oneofIndex: 0, jsonName: 'stringValue' },
          { name: 'bool_value', number: 4, label: LABEL_OPTIONAL, type: TYPE.bool, oneofIndex: 0, jsonName: 'boolValue' },
          { name: 'struct_value', number: 5, label: LABEL_OPTIONAL, type: TYPE.message, typeName: '.google.protobuf.Struct', oneofIndex: 0, jsonName: 'structValue' },
          { name: 'list_value', number: 6, label: LABEL_OPTIONAL, type: TYPE.message, typeName: '.google.protobuf.ListValue', oneofIndex: 0, jsonName: 'listValue' },
        ],
        oneofDecl: [{ name: 'kind' }],
      },
      { name: 'ListValue', field: [{ name: 'values', number: 1, label: LABEL_REPEATED, type: TYPE.message, typeName: '.google.protobuf.Value', jsonName: 'values' }] },
    ],
    enumType: [{ name: 'NullValue', value: [{ name: 'NULL_VALUE', number: 0 }] }],
  })],
]);

/** A message of the file (`Order`) or a well-known type's full name (`google.protobuf.Struct`), as a descriptor names it. */
const typeRef = (pkg: string, name: string): string => (name.includes('.') ? `.${name}` : `.${pkg}.${name}`);

/** The project file's FileDescriptorProto followed by those of its imports: what reflection answers. */
export function fileDescriptors(file: ProtoFile): { name: string; files: Uint8Array[] } {
  const own = encodeFile({
    name: PROTO_FILE_NAME, package: file.package, dependency: file.imports, syntax: 'proto3',
    messageType: file.messages.map((m) => messageDesc(m, file.package)),
    service: file.services.map((s) => ({
      name: s.name,
      method: s.methods.map((m) => ({
        name: m.name, inputType: typeRef(file.package, m.input), outputType: typeRef(file.package, m.output),
        ...(m.clientStreaming ? { clientStreaming: true } : {}), ...(m.serverStreaming ? { serverStreaming: true } : {}),
      })),
    })),
  });
  return { name: PROTO_FILE_NAME, files: [own, ...file.imports.map((i) => WELL_KNOWN.get(i)!)] };
}

/** A well-known file by name (reflection's file_by_filename for an import). */
export const wellKnownFile = (name: string): Uint8Array | undefined => WELL_KNOWN.get(name);
