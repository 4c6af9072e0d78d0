/** Status lines for uWS writeStatus, built once. */
const TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 304: 'Not Modified', 400: 'Bad Request', 401: 'Unauthorized',
  403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 413: 'Payload Too Large', 415: 'Unsupported Media Type',
  422: 'Unprocessable Entity', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};
const LINES = new Map<number, string>(Object.entries(TEXT).map(([k, v]) => [Number(k), `${k} ${v}`]));

export const statusLine = (status: number): string => LINES.get(status) ?? String(status);
