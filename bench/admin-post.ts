/**
 * A POST helper for bench setup through the admin API: JSON in and out,
 * throwing with the answer's text on any non-2xx so a broken setup stops the run.
 */
export type AdminPost = (path: string, body: unknown, extraHeaders?: Record<string, string>) => Promise<any>;

export function adminPoster(baseUrl: string, adminToken: string): AdminPost {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  return async (path, body, extra = {}) => {
    const r = await fetch(baseUrl + path, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
}
