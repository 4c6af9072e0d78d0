import type { ProtoField, ProtoFile, ProtoMessage } from './proto-model.js';

const fieldLine = (x: ProtoField): string =>
  `  ${x.repeated ? 'repeated ' : x.optional ? 'optional ' : ''}${x.type} ${x.name} = ${x.number};`;

function messageText(m: ProtoMessage): string {
  const lines = [`message ${m.name} {`];
  if (m.reservedNumbers.length > 0) lines.push(`  reserved ${m.reservedNumbers.join(', ')};`);
  if (m.reservedNames.length > 0) lines.push(`  reserved ${m.reservedNames.map((n) => `"${n}"`).join(', ')};`);
  for (const x of m.fields) lines.push(fieldLine(x));
  lines.push('}');
  return lines.join('\n');
}

/** The proto3 file served at `GET /grpc/proto/service-app.proto`. */
export function protoText(file: ProtoFile, header: string): string {
  const out = [`// ${header}`, 'syntax = "proto3";', '', `package ${file.package};`, ''];
  for (const i of file.imports) out.push(`import "${i}";`);
  out.push('');
  for (const s of file.services) {
    out.push(`service ${s.name} {`);
    for (const m of s.methods) out.push(`  rpc ${m.name}(${m.clientStreaming ? 'stream ' : ''}${m.input}) returns (${m.serverStreaming ? 'stream ' : ''}${m.output});`);
    out.push('}', '');
  }
  for (const m of file.messages) out.push(messageText(m), '');
  return out.join('\n');
}
