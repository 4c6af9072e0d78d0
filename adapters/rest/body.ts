import { ServiceError } from '../../runtime/errors/service-error.js';

/** Deepest JSON nesting we parse; deeper documents are refused before JSON.parse. */
export const MAX_JSON_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

const invalid = (reason: string, message: string): ServiceError => new ServiceError('VALIDATION_FAILED', `Request.${reason}`, message);

/** Linear scan for bracket depth outside strings: bounds the work JSON.parse and later recursion can do. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped char
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** `application/json` or any `+json` type, parameters allowed. */
export function isJsonContentType(value: string): boolean {
  const base = value.split(';', 1)[0]!.trim().toLowerCase();
  return base === 'application/json' || (base.startsWith('application/') && base.endsWith('+json'));
}

/**
 * Decodes a request body: strict UTF-8, JSON content type, bounded depth,
 * then JSON.parse. Every failure is a 4xx ServiceError.
 */
export function decodeJsonBody(bytes: Buffer, contentType: string): unknown {
  if (bytes.length === 0) return undefined;
  if (contentType === '' || !isJsonContentType(contentType)) {
    throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'Request.UnsupportedContentType', 'request bodies must be application/json');
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid('InvalidUtf8', 'body is not valid UTF-8');
  }
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw invalid('TooDeep', `JSON nesting deeper than ${MAX_JSON_DEPTH}`);
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('MalformedJson', 'body is not valid JSON');
  }
}
