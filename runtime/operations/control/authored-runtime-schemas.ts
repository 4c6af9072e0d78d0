/**
 * Schemas of the authored-runtime operations (CONTRACT "Sandbox and limits"; docs/authored-code.md
 * "Egress"), referred to by their contracts in authored-runtime.ts.
 */
import { schemaRef, type Json } from '../../publication/openapi-components.js';
import { HOST_NAME_PATTERN, MAX_ALLOWED_HOSTS } from '../../authored/egress-hosts.js';
import { defineSchemas } from '../contract/index.js';
import { at, controlEnvelope, controlSingle } from './control-schemas.js';

const hosts = (description: string): Json => ({
  type: 'array', maxItems: MAX_ALLOWED_HOSTS, description,
  items: { type: 'string', minLength: 1, maxLength: 255, description: `A host name (\`${HOST_NAME_PATTERN}\`, case-insensitive) or an IPv6 literal in brackets; no scheme, port or path.` },
});

export const AUTHORED_RUNTIME_SCHEMAS = defineSchemas({
  ControlAuthoredEgress: {
    type: 'object', required: ['allowedHosts', 'updatedAt'], additionalProperties: false,
    properties: {
      allowedHosts: hosts('Hosts `ctx.fetch` may reach, on any port, lower case, in the order given, without duplicates.'),
      updatedAt: { anyOf: [at(), { type: 'null' }], description: 'Null until the list was first set (no egress).' },
    },
  },
  ControlAuthoredEgressInput: {
    type: 'object', required: ['allowedHosts'], additionalProperties: false,
    properties: { allowedHosts: hosts('Replaces the whole list; `[]` turns egress off.') },
  },
  ControlAuthoredWorkersReset: {
    type: 'object', required: ['reset'], additionalProperties: false,
    properties: { reset: { type: 'boolean', const: true, description: 'The pool is replacing its workers; in-flight invocations finish on the old ones.' } },
  },
  ControlAuthoredEgressSingle: controlSingle('AuthoredRuntime', ['read', 'updated'], 'ControlAuthoredEgress'),
  ControlAuthoredWorkersResetSingle: controlEnvelope('AuthoredRuntime', 'accepted', schemaRef('ControlAuthoredWorkersReset')),
});
