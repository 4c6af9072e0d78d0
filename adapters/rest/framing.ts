import type { HttpRequest } from 'uWebSockets.js';

/**
 * Request framing the adapter refuses (request smuggling). uWS frames the
 * body by the FIRST `Content-Length` and passes the others on as headers, so
 * `Content-Length: 5` + `Content-Length: 30` would make the bytes after the
 * fifth a second request, while a proxy in front that used the other value
 * sees one. A request with disagreeing `Content-Length`s, or with both
 * `Content-Length` and `Transfer-Encoding` (uWS itself already drops that
 * one before JS sees it), is refused.
 *
 * Refused means the connection is closed without an answer: by the time the
 * handler runs, uWS has already parsed any bytes pipelined after the body as
 * further requests and will route them, and whatever the handler writes sits
 * in uWS's cork buffer until that parsing is done. A 400 therefore can only
 * go out together with the smuggled request's answer; closing at once is the
 * only answer that serves neither (docs/rest-api.md, "Known limitations").
 */
export function framingProblem(req: HttpRequest): string | null {
  // Without a (first) Content-Length there is nothing to disagree with: most requests stop here.
  if (req.getHeader('content-length') === '') return null;
  let length: string | null = null;
  let conflicting = false;
  let chunked = false;
  req.forEach((name, value) => {
    if (name === 'content-length') {
      if (length !== null && length !== value.trim()) conflicting = true;
      length = value.trim();
    } else if (name === 'transfer-encoding') {
      chunked = true;
    }
  });
  if (conflicting) return 'conflicting Content-Length headers';
  if (length !== null && chunked) return 'both Content-Length and Transfer-Encoding';
  return null;
}
