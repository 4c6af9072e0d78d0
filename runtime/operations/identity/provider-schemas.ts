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
    type: 'object', required: ['issuer', 'clientId', 'redirectUri'], additionalProperties: false,
    // In the order the operation reports them (`reasons.order`); URL checks (absolute, no fragment, public address) stay in the operation.
    properties: {
      issuer: bounded(2048, 'The provider\'s issuer URL (its discovery document is `<issuer>/.well-known/openid-configuration`); a private address answers 422 `Federation.PrivateIssuer`.'),
      clientId: bounded(255, 'The client id registered with the provider.'),
      clientSecret: bounded(1024, 'Required when the provider is created (else 422 `Federation.ClientSecretRequired`); left out on a replace, the stored one is kept. Kept in the secret store, never answered.'),
      scopes: {
        type: 'array', maxItems: 20, description: 'OAuth scopes to ask for; default `openid email profile`. `openid` is always asked for.',
        // Each entry is checked by the operation, so a bad one answers `field: "scopes"` as before.
        items: { description: 'An OAuth scope token (1 to 64 visible ASCII characters, no `"` or `\\`).' },
      },
      redirectUri: bounded(2048, 'Absolute URL without a fragment: where the provider sends the browser back; `federation/start` accepts only this one.'),
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
