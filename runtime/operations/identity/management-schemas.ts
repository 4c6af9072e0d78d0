/**
 * Schemas of `/IdentityManagement` (the platform admin's view of a project's
 * subjects; docs/identity.md), referred to by the contracts in
 * identity-management.ts. No schema here holds a password or its hash.
 */
import { dateTimeSchema, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas, ref } from '../contract/index.js';
import { listOf, singleOf } from './identity-schemas.js';

const obj = (required: string[], properties: Json, extra: Json = {}): Json => ({ type: 'object', ...extra, required, properties });
export const SUBJECT_STATE: Json = { type: 'string', enum: ['active', 'deactivated'] };
const EMAIL: Json = { type: ['string', 'null'], description: 'The subject\'s address (trimmed, lower-cased); null for a federated subject registered without one.' };

export const MANAGEMENT_SCHEMAS = defineSchemas({
  IdentityClaims: {
    type: 'object',
    description: 'Claim name → string value. Names: a letter, then letters, digits or `_` (≤ 64); at most 50 claims, values ≤ 256 characters, ≤ 2048 bytes as JSON. Carried as `claims` in access tokens issued afterwards; row policies read them as `{ "$actor": "claims.<name>" }`.',
    maxProperties: 50,
    propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' },
    additionalProperties: { type: 'string', maxLength: 256 },
  },
  IdentityClaimsInput: obj(['claims'], {
    // Checked by the operation (parseClaims): its 422s name the claim (`claims.<name>`) with their own reasons
    // (`Identity.InvalidClaimName`, `…InvalidClaimValue`, `…TooManyClaims`, `…ClaimsTooLarge`), which a schema would not.
    claims: { description: 'The whole new set, an IdentityClaims object (`{}` clears it). Not an object: 422 `Identity.InvalidClaims`.' },
  }, { additionalProperties: false }),
  IdentityClaimsSingle: singleOf(obj(['subjectId', 'claims'], { subjectId: uuidSchema(), claims: ref('IdentityClaims') })),
  IdentitySubject: obj(['subjectId', 'email', 'state', 'claims', 'createdAt', 'deactivatedAt'], {
    subjectId: uuidSchema(),
    email: EMAIL,
    state: SUBJECT_STATE,
    claims: ref('IdentityClaims'),
    createdAt: dateTimeSchema(),
    deactivatedAt: { type: ['string', 'null'], format: 'date-time' },
  }),
  IdentitySubjectSingle: singleOf(ref('IdentitySubject')),
  IdentitySubjectList: listOf(ref('IdentitySubject')),
  IdentityMembership: obj(['subjectId', 'email', 'state', 'roles', 'grants'], {
    subjectId: uuidSchema(),
    email: EMAIL,
    state: SUBJECT_STATE,
    roles: { type: 'array', items: { type: 'string' }, description: '`authenticated` while the subject is active; none once deactivated.' },
    grants: {
      type: 'array',
      description: 'Capability grants the subject holds: its own (`via: subject`) and those of its roles (`via: role`).',
      items: obj(['grantId', 'grant', 'via'], {
        grantId: uuidSchema(),
        grant: { type: 'string', description: '`entity:<Entity>:<verb>` or `branch:<name>:approve`.' },
        via: { type: 'string', enum: ['subject', 'role'] },
        role: { type: 'string', description: 'The role that confers the grant (`via: role` only).' },
      }),
    },
  }),
  IdentityMembershipList: listOf(ref('IdentityMembership')),
});
