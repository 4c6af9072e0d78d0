/**
 * Schemas of a project's OpenID Connect identity providers
 * (`/projects/{projectId}/identity/providers`; docs/identity.md "Federation (OIDC)"),
 * referred to by the contracts in federation.ts. No answer carries the client secret.
 */
import { dateTimeSchema } from '../../publication/openapi-components.js';
import { defineSchemas, ref } from '../contract/index.js';
import { singleOf } from './identity-schemas.js';

const bounded = (max: number, description: string): Json => ({ type: 'string', minLength: 1, maxLength: max, description });
type Json = Record<string, unknown>;

export const PROVIDER_SCHEMAS = defineSchemas({
  IdentityProviderInput: {
    type: 'object', required: ['issuer'], additionalProperties: false,
    description: 'Required: `issuer`, `clientId`, `redirectUri`; `clientSecret` when the provider is created.',
    // The operation checks the issuer URL (reachable, public) before the other fields, so only `issuer` is checked
    // here: a problem in a later field must not be reported before a refused issuer (422 `Federation.InvalidBody`,
    // `…InvalidScopes`, `…InvalidUrl` naming the field, as before).
    properties: {
      issuer: bounded(2048, 'The provider\'s issuer URL (its discovery document is `<issuer>/.well-known/openid-configuration`); a private address answers 422 `Federation.PrivateIssuer`.'),
      clientId: { description: 'Required, a string of 1 to 255 characters: the client id registered with the provider.' },
      clientSecret: { description: 'A string of 1 to 1024 characters. Required when the provider is created (else 422 `Federation.ClientSecretRequired`); left out on a replace, the stored one is kept. Kept in the secret store, never answered.' },
      scopes: { description: 'An array of at most 20 OAuth scope tokens (1 to 64 visible ASCII characters, no `"` or `\\`), else 422 `Federation.InvalidScopes`; default `openid email profile`. `openid` is always asked for.' },
      redirectUri: { description: 'Required, a string of 1 to 2048 characters: an absolute URL without a fragment, where the provider sends the browser back; `federation/start` accepts only this one.' },
    },
  },
  IdentityProvider: {
    type: 'object', required: ['name', 'issuer', 'clientId', 'clientSecretRef', 'redirectUri', 'scopes', 'createdAt', 'updatedAt'],
    properties: {
      name: { type: 'string' },
      issuer: { type: 'string' },
      clientId: { type: 'string' },
      clientSecretRef: { type: 'string', description: '`secret:<id>`: where the secret is kept; never the secret.' },
      redirectUri: { type: 'string' },
      scopes: { type: 'array', items: { type: 'string' } },
      createdAt: dateTimeSchema(),
      updatedAt: dateTimeSchema(),
    },
  },
  IdentityProviderSingle: singleOf(ref('IdentityProvider')),
  IdentityProviderList: singleOf({ type: 'array', items: ref('IdentityProvider') }),
});
