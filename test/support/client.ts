/** A small HTTP client for tests: real sockets through fetch, JSON in and out. */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface ClientScope {
  token?: string | null;
  tenant?: string;
  project?: string;
  branch?: string;
}

export class Client {
  constructor(readonly baseUrl: string, readonly scope: ClientScope = {}) {}

  with(scope: ClientScope): Client {
    return new Client(this.baseUrl, { ...this.scope, ...scope });
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.scope.token != null) h.authorization = `Bearer ${this.scope.token}`;
    if (this.scope.tenant !== undefined) h['x-service-tenant'] = this.scope.tenant;
    if (this.scope.project !== undefined) h['x-service-project'] = this.scope.project;
    if (this.scope.branch !== undefined) h['x-service-branch'] = this.scope.branch;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers: h, ...(payload === undefined ? {} : { body: payload }) });
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text !== '' && (res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) { return this.request<T>('GET', path, undefined, headers); }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) { return this.request<T>('POST', path, body, headers); }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) { return this.request<T>('PUT', path, body, headers); }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) { return this.request<T>('PATCH', path, body, headers); }
  delete<T = any>(path: string, body?: unknown, headers?: Record<string, string>) { return this.request<T>('DELETE', path, body, headers); }
}

/** Creates a tenant and project through the bootstrap routes and returns a client scoped to them. */
export async function bootstrapProject(baseUrl: string, adminToken: string, slug = `t${Math.random().toString(36).slice(2, 10)}`): Promise<{ client: Client; tenantId: string; projectId: string; tenant: string; project: string }> {
  const admin = new Client(baseUrl, { token: adminToken });
  const t = await admin.post('/api/TenantRecord', { slug, name: `Tenant ${slug}` });
  if (t.status !== 201) throw new Error(`tenant create failed: ${t.status} ${t.text}`);
  const p = await admin.post('/api/projects/create', { tenant: slug, slug: 'app', name: 'App' });
  if (p.status !== 201) throw new Error(`project create failed: ${p.status} ${p.text}`);
  return { client: admin.with({ tenant: slug, project: 'app' }), tenantId: t.body.data.id, projectId: p.body.data.id, tenant: slug, project: 'app' };
}

/** Defines an entity and asserts it was accepted. */
export async function defineEntity(client: Client, def: unknown): Promise<any> {
  const r = await client.post('/api/Schema/entities', def);
  if (r.status !== 201) throw new Error(`entity define failed: ${r.status} ${r.text}`);
  return r.body;
}

/** Asserts the spec's error envelope and returns the error object. */
export function errorOf(reply: Reply): { code: string; reasonCode: string; correlationId: string; field?: string; missingGrants?: string[]; message: string } {
  const e = reply.body?.error;
  if (typeof e !== 'object' || e === null || typeof e.code !== 'string' || typeof e.reasonCode !== 'string' || typeof e.correlationId !== 'string') {
    throw new Error(`not an error envelope (${reply.status}): ${reply.text.slice(0, 300)}`);
  }
  return e;
}
