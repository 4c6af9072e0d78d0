/**
 * `/IdentityManagement`: the platform admin's view of a project's subjects
 * (list, read, claims, deactivate, memberships). Registered by
 * openapi-static.ts. A project user token answers 403. No schema here holds a
 * password or its hash.
 */
import { dateTimeSchema, listEnvelope, schemaRef, singleEnvelope, uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';

export const IDENTITY_MANAGEMENT_SCHEMA_NAMES = [
  'IdentityClaims', 'IdentityClaimsInput', 'IdentityClaimsSingle', 'IdentitySubject', 'IdentitySubjectSingle', 'IdentitySubjectList',
  'IdentityMembership', 'IdentityMembershipList',
] as const;

const obj = (required: string[], properties: Json, extra: Json = {}): Json => ({ type: 'object', ...extra, required, properties });
const SUBJECT_STATE: Json = { type: 'string', enum: ['active', 'deactivated'] };

export function identityManagementSchemas(): Json {
  return {
    IdentityClaims: {
      type: 'object',
      description: 'Claim name → string value. Names: a letter, then letters, digits or `_` (≤ 64); at most 50 claims, values ≤ 256 characters, ≤ 2048 bytes as JSON. Carried as `claims` in access tokens issued afterwards; row policies read them as `{ "$actor": "claims.<name>" }`.',
      maxProperties: 50,
      propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' },
      additionalProperties: { type: 'string', maxLength: 256 },
    },
    IdentityClaimsInput: obj(['claims'], { claims: schemaRef('IdentityClaims') }, { additionalProperties: false }),
    IdentityClaimsSingle: singleEnvelope(obj(['subjectId', 'claims'], { subjectId: uuidSchema(), claims: schemaRef('IdentityClaims') })),
    IdentitySubject: obj(['subjectId', 'email', 'state', 'claims', 'createdAt', 'deactivatedAt'], {
      subjectId: uuidSchema(),
      email: { type: 'string', format: 'email' },
      state: SUBJECT_STATE,
      claims: schemaRef('IdentityClaims'),
      createdAt: dateTimeSchema(),
      deactivatedAt: { type: ['string', 'null'], format: 'date-time' },
    }),
    IdentitySubjectSingle: singleEnvelope(schemaRef('IdentitySubject')),
    IdentitySubjectList: listEnvelope(schemaRef('IdentitySubject')),
    IdentityMembership: obj(['subjectId', 'email', 'state', 'roles', 'grants'], {
      subjectId: uuidSchema(),
      email: { type: 'string', format: 'email' },
      state: SUBJECT_STATE,
      roles: { type: 'array', items: { type: 'string' }, description: '`authenticated` while the subject is active; none once deactivated.' },
      grants: {
        type: 'array',
        description: 'Capability grants the subject holds: its own (`via: subject`) and those of its roles (`via: role`).',
        items: obj(['grantId', 'grant', 'via'], {
          grantId: uuidSchema(),
          grant: { type: 'string', description: '`entity:<Entity>:<verb>`.' },
          via: { type: 'string', enum: ['subject', 'role'] },
          role: { type: 'string', description: 'The role that confers the grant (`via: role` only).' },
        }),
      },
    }),
    IdentityMembershipList: listEnvelope(schemaRef('IdentityMembership')),
  };
}

const query = (name: string, description: string, schema: Json): Json => ({ name, in: 'query', required: false, description, schema });

export function identityManagementParameters(): Json {
  return {
    SubjectId: { name: 'id', in: 'path', required: true, description: 'Subject id (`subjectId` of register).', schema: uuidSchema() },
    SubjectEmailQuery: query('email', 'Only the subject with this address (compared case-insensitively).', { type: 'string', format: 'email' }),
    SubjectStateQuery: query('state', 'Only subjects in this state.', SUBJECT_STATE),
    SubjectIdQuery: query('subjectId', 'Only this subject.', uuidSchema()),
  };
}

const TAG = 'IdentityManagement';
const IM = '/IdentityManagement';
/** 401 no credential; 403 a user token; 404 scope or subject; 422 bad input or missing scope headers. */
const ERRORS = [401, 403, 404, 422];

export const IDENTITY_MANAGEMENT_OPS: StaticOp[] = [
  { method: 'get', path: `${IM}/subjects`, operationId: 'IdentityManagement.Subjects.List', tag: TAG, auth: 'admin', summary: 'Page through the project\'s subjects, oldest first', params: ['SubjectEmailQuery', 'SubjectStateQuery', 'PageSize', 'Cursor'], status: 200, response: 'IdentitySubjectList', errors: ERRORS },
  { method: 'get', path: `${IM}/subjects/{id}`, operationId: 'IdentityManagement.Subjects.Read', tag: TAG, auth: 'admin', summary: 'Read a subject', params: ['SubjectId'], status: 200, response: 'IdentitySubjectSingle', errors: ERRORS },
  {
    method: 'put', path: `${IM}/subjects/{id}/claims`, operationId: 'IdentityManagement.Subjects.PutClaims', tag: TAG, auth: 'admin',
    summary: 'Replace a subject\'s claims (carried by tokens issued afterwards)',
    description: 'Replaces the whole set (`{}` clears it). Access tokens issued by later logins and refreshes carry it as `claims`; tokens already issued keep theirs. A bad name or value answers 422 with `field: "claims.<name>"`.',
    params: ['SubjectId'], body: 'IdentityClaimsInput', status: 200, response: 'IdentityClaimsSingle', errors: ERRORS,
  },
  {
    method: 'post', path: `${IM}/subjects/{id}/deactivate`, operationId: 'IdentityManagement.Subjects.Deactivate', tag: TAG, auth: 'admin',
    summary: 'Deactivate a subject: its sessions end at once on every node',
    description: 'Idempotent. Every session of the subject is revoked: its access and refresh tokens answer 401 and its realtime connections are closed (4401), on every node. Login answers 401 `Identity.InvalidCredentials`.',
    params: ['SubjectId'], status: 200, response: 'IdentitySubjectSingle', errors: ERRORS,
  },
  { method: 'get', path: `${IM}/memberships`, operationId: 'IdentityManagement.Memberships.List', tag: TAG, auth: 'admin', summary: 'Roles and capability grants of each subject', params: ['SubjectIdQuery', 'SubjectEmailQuery', 'SubjectStateQuery', 'PageSize', 'Cursor'], status: 200, response: 'IdentityMembershipList', errors: ERRORS },
];

export const IDENTITY_MANAGEMENT_TAGS = [
  { name: TAG, description: 'The platform admin manages a project\'s subjects: claims, deactivation, memberships (docs/identity.md).' },
];
