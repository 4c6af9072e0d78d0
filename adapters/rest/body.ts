import { ServiceError } from '../../runtime/errors/service-error.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../runtime/json-depth.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const invalid = (reason: string, message: string): ServiceError => new ServiceError('VALIDATION_FAILED', `Request.${reason}`, message);

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
