/**
 * Schemas of the health probes and the runtime fabric (health.ts). An
 * anonymous caller gets the status only; the platform admin's bearer adds the
 * node's id, mode and members, so the extra fields are optional.
 */
import { uuidSchema } from '../../publication/openapi-components.js';
import { defineSchemas, ref } from '../contract/index.js';
import { at, controlEnvelope, int, str } from './control-schemas.js';

const MODE = { type: 'string', enum: ['single', 'cluster'], description: 'Single node, or a member of a cluster.' };
const NODE_ID = str('Id of the node that answered (platform admin only).');
const CORRELATION = str('Same value as the `X-Service-Correlation-Id` header (platform admin only).');

const LOAD = {
  type: 'object', required: ['activations', 'inFlight', 'rssBytes'],
  properties: { activations: int('Actors active on the node.'), inFlight: int('Requests in flight.'), rssBytes: int('Resident set size of the process.') },
};

export const HEALTH_SCHEMAS = defineSchemas({
  PlatformNodeLoad: LOAD,
  /** What health shows of a member: no address, no start time. */
  PlatformHealthMember: {
    type: 'object', required: ['nodeId', 'updatedAt', 'load'],
    properties: { nodeId: str(), updatedAt: at(), load: ref('PlatformNodeLoad') },
  },
  PlatformNodeMember: {
    type: 'object', required: ['nodeId', 'startedAt', 'updatedAt', 'url', 'load'],
    properties: {
      nodeId: str(), startedAt: at(), updatedAt: at(),
      url: { type: ['string', 'null'], description: 'Where peers reach the node; null in single mode.' },
      load: ref('PlatformNodeLoad'),
    },
  },
  PlatformHealth: {
    type: 'object', required: ['status'],
    properties: {
      status: { type: 'string', enum: ['ok', 'draining'], description: '`draining` once a graceful stop began.' },
      nodeId: NODE_ID,
      mode: MODE,
      members: { type: 'array', items: ref('PlatformHealthMember'), description: 'Live members of the cluster (this node in single mode); platform admin only.' },
      correlationId: CORRELATION,
    },
  },
  PlatformLiveness: {
    type: 'object', required: ['status'],
    properties: { status: { type: 'string', const: 'live' }, nodeId: NODE_ID, correlationId: CORRELATION },
  },
  PlatformReadiness: {
    type: 'object', required: ['status', 'checks'],
    properties: {
      status: { type: 'string', const: 'ready' },
      checks: { type: 'object', additionalProperties: { type: 'string' }, description: 'Dependency → `ok` (`storage`, `nats` in a cluster).' },
      nodeId: NODE_ID,
      correlationId: CORRELATION,
    },
  },
  PlatformRuntimeFabric: controlEnvelope('RuntimeFabric', 'observed', {
    type: 'object', required: ['projectId', 'mode', 'servedBy', 'nodes'],
    properties: {
      projectId: uuidSchema(),
      mode: MODE,
      servedBy: str('The node that answered.'),
      nodes: { type: 'array', items: ref('PlatformNodeMember'), description: 'Every node serves every project; actors are placed by lease.' },
    },
  }),
});
