/**
 * Schemas of the capability grants of a project (`/projects/{projectId}/capability-grants`;
 * docs/authorization.md, docs/rest-api.md), referred to by the contracts in grants.ts.
 */
import { dateTimeSchema, uuidSchema } from '../../publication/openapi-components.js';
import { defineSchemas, ref } from '../contract/index.js';
import { controlOf, UUID_PATTERN } from './identity-schemas.js';
import { GRANT_PATTERN } from './api-key-schemas.js';
import { ROLE_RE } from './grant-patterns.js';

const ROLE_PATTERN = ROLE_RE.source;
const GRANT_TEXT = `\`entity:<Entity|*>:<read|insert|update|delete|*>\`, \`branch:<name|*>:approve\` or \`operation:<name|*>:invoke\` (pattern \`${GRANT_PATTERN}\`)`;

export const GRANT_SCHEMAS = defineSchemas({
  CapabilityGrantInput: {
    type: 'object', additionalProperties: false,
    description: 'Exactly one holder, `subjectId` or `role` (both or neither: 422 `CapabilityGrant.HolderRequired`, checked by the operation), and `grant` (required; '
      + 'a missing one answers 422 `CapabilityGrant.InvalidGrant` after the holder check, so the schema does not list it as required). The same grant again answers 201 with the existing record.',
    // Only unknown properties are refused by the schema: the operation checks the holder rule first (422
    // `CapabilityGrant.HolderRequired`, no field), which no schema problem may overtake; then grant, subjectId, role.
    properties: {
      grant: { description: `Required, a string: ${GRANT_TEXT} (else 422 \`CapabilityGrant.InvalidGrant\`).` },
      subjectId: { description: `A UUID (pattern \`${UUID_PATTERN}\`) or null: a subject of the project (\`subjectId\` of register); else 422 \`CapabilityGrant.InvalidSubjectId\`, unknown: \`CapabilityGrant.SubjectNotFound\`.` },
      role: { description: `A role name (pattern \`${ROLE_PATTERN}\`, e.g. \`authenticated\`) or null; else 422 \`CapabilityGrant.InvalidRole\`.` },
      rowFilter: { description: 'Row filter (filter language of list routes) the holder\'s reads and writes are limited to; checked against the live model (docs/authorization.md).' },
      check: { description: 'Condition rows the holder writes must satisfy; checked against the live model.' },
      fields: { description: 'The fields the grant covers (a field mask); checked against the live model.' },
    },
  },
  CapabilityGrant: {
    type: 'object', required: ['grantId', 'projectId', 'subjectId', 'role', 'grant', 'createdAt'],
    properties: {
      grantId: uuidSchema(),
      projectId: uuidSchema(),
      subjectId: { type: ['string', 'null'], format: 'uuid' },
      role: { type: ['string', 'null'] },
      grant: { type: 'string' },
      rowFilter: { description: 'As given; present only when the grant has one.' },
      check: { description: 'As given; present only when the grant has one.' },
      fields: { description: 'As given; present only when the grant has them.' },
      createdAt: dateTimeSchema(),
    },
  },
  CapabilityGrantSingle: controlOf('CapabilityGrant', 'active', ref('CapabilityGrant')),
  CapabilityGrantList: controlOf('CapabilityGrant', 'listed', { type: 'array', items: ref('CapabilityGrant') }),
});
