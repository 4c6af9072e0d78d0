// oidc-provider ships no types (its @types package lags the major); the federation test uses it untyped.
declare module 'oidc-provider';
