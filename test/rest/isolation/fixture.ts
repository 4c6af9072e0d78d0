/**
 * The world of the isolation property test: 2 tenants × 2 projects × 2 users,
 * one API key per project, and per user one Folder and a few Notes whose
 * String values carry a marker naming their project and user, so any answer
 * can be searched for values it must not hold.
 */
import { Client, defineEntity } from '../../support/client.js';
import { expectStatus } from '../../support/expect.js';

/**
 * User-level isolation (CONTRACT "Authorization" → "Row policy and field masks"): the
 * read/update/delete grants carry `rowFilter: { owner: { eq: { $actor: 'subjectId' } } }`,
 * and the oracle (oracle.ts) also counts a user reading or changing another user's rows
 * of its own project as a violation. False checks project isolation alone.
 */
export const USER_ISOLATION = true;

export const NOTES_PER_USER = 6;
const PASSWORD = 'isolation property pw';

/** `MARK-P<project>-U<user>-…`; user `K` marks values written with the project's API key. */
export const MARKER = /MARK-P(\d)-U([0-9K])-/g;
export const marker = (project: number, user: number | 'K'): string => `MARK-P${project}-U${user}-`;

export interface Project {
  index: number;
  tenantSlug: string;
  tenantId: string;
  slug: string;
  id: string;
  /** An admin client scoped to this project by slugs. */
  admin: Client;
}

/** Who sends a request: a registered user (index 0/1 in its project) or the project's API key. */
export interface Actor {
  project: number;
  user: number | 'K';
  subjectId: string | null;
  token: string;
  label: string;
}

export interface RowState {
  entity: 'notes' | 'folders';
  project: number;
  owner: string;
  /** The marked values: title/secret of a note, name/secret of a folder. */
  text: string;
  secret: string;
  folder: string | null;
}

export interface World {
  projects: Project[];
  actors: Actor[];
  /** The expected state of every row, by id; deleted rows are removed. */
  rows: Map<string, RowState>;
  /** Every id that ever existed (for "ids from other scopes", deleted ones included). */
  allIds: { id: string; entity: 'notes' | 'folders'; project: number }[];
  /** Event ids seen by the admin in each project. */
  eventIds: { id: string; project: number }[];
}

const NOTE = {
  entityName: 'Note',
  fields: [
    { name: 'owner', type: 'ID', nullable: false },
    { name: 'title', type: 'String', nullable: false },
    { name: 'secret', type: 'String', nullable: true },
    { name: 'folder', type: 'ID', nullable: true, references: 'Folder' },
  ],
};
const FOLDER = {
  entityName: 'Folder',
  fields: [
    { name: 'owner', type: 'ID', nullable: false },
    { name: 'name', type: 'String', nullable: false },
    { name: 'secret', type: 'String', nullable: true },
  ],
};

const OWNER_ONLY = { owner: { eq: { $actor: 'subjectId' } } };

async function createProjects(baseUrl: string, adminToken: string, runTag: string): Promise<Project[]> {
  const root = new Client(baseUrl, { token: adminToken });
  const projects: Project[] = [];
  for (let t = 0; t < 2; t++) {
    const tenantSlug = `iso${t}${runTag}`;
    const tenant = await root.post('/api/TenantRecord', { slug: tenantSlug, name: `Isolation ${t}` });
    expectStatus(tenant, 201);
    // The same two project slugs in both tenants: a slug alone names a different project per tenant.
    for (const slug of ['alpha', 'beta']) {
      const p = await root.post('/api/projects/create', { tenant: tenantSlug, slug, name: slug });
      expectStatus(p, 201);
      projects.push({ index: projects.length, tenantSlug, tenantId: tenant.body.data.id, slug, id: p.body.data.id, admin: root.with({ tenant: tenantSlug, project: slug }) });
    }
  }
  return projects;
}

async function grantAuthenticated(p: Project): Promise<void> {
  for (const entity of ['Note', 'Folder']) {
    for (const verb of ['read', 'insert', 'update', 'delete']) {
      // Insert grants take no rowFilter (CONTRACT: rowFilter limits read, update, delete).
      const rowFilter = USER_ISOLATION && verb !== 'insert' ? { rowFilter: OWNER_ONLY } : {};
      expectStatus(await p.admin.post(`/api/projects/${p.id}/capability-grants`, { role: 'authenticated', grant: `entity:${entity}:${verb}`, ...rowFilter }), 201);
    }
  }
}

async function registerUser(p: Project, user: number): Promise<Actor> {
  const anon = p.admin.with({ token: null });
  const email = `u${user}@p${p.index}.example.com`;
  const reg = await anon.post('/api/identity/register', { email, password: PASSWORD });
  expectStatus(reg, 201);
  const login = await anon.post('/api/identity/login', { email, password: PASSWORD });
  expectStatus(login, 200);
  return { project: p.index, user, subjectId: reg.body.data.subjectId, token: login.body.accessToken, label: `P${p.index}U${user}` };
}

async function createApiKey(p: Project): Promise<Actor> {
  const r = await p.admin.post(`/api/projects/${p.id}/api-keys`, { name: 'isolation', grants: ['entity:Note:*', 'entity:Folder:*'] });
  expectStatus(r, 201);
  const shown = await p.admin.with({ tenant: undefined, project: undefined }).post(`/api/CredentialReveal/${r.body.data.revealTokenId}/reveal`);
  expectStatus(shown, 200);
  return { project: p.index, user: 'K', subjectId: null, token: shown.body.data.secret, label: `P${p.index}K` };
}

/** Seeds one folder and NOTES_PER_USER notes per user, as that user (so owner is really theirs). */
async function seedRows(world: World, p: Project, actor: Actor): Promise<void> {
  const as = p.admin.with({ token: actor.token });
  const mk = marker(p.index, actor.user);
  const f = await as.post('/api/folders', { owner: actor.subjectId, name: `${mk}folder`, secret: `${mk}folder-secret` });
  expectStatus(f, 201);
  const folderId = f.body.data.id as string;
  world.rows.set(folderId, { entity: 'folders', project: p.index, owner: actor.subjectId!, text: `${mk}folder`, secret: `${mk}folder-secret`, folder: null });
  world.allIds.push({ id: folderId, entity: 'folders', project: p.index });
  for (let n = 0; n < NOTES_PER_USER; n++) {
    const title = `${mk}note-${n}`;
    const secret = `${mk}secret-${n}`;
    const r = await as.post('/api/notes', { owner: actor.subjectId, title, secret, folder: folderId });
    expectStatus(r, 201);
    world.rows.set(r.body.data.id, { entity: 'notes', project: p.index, owner: actor.subjectId!, text: title, secret, folder: folderId });
    world.allIds.push({ id: r.body.data.id, entity: 'notes', project: p.index });
  }
}

/** Event ids per project, as the admin sees them (polls: the outbox moves events asynchronously). */
async function collectEventIds(world: World): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const p of world.projects) {
    const expected = [...world.rows.values()].filter((r) => r.project === p.index).length;
    for (;;) {
      const r = await p.admin.get('/api/events?pageSize=100');
      expectStatus(r, 200);
      const data = r.body.data as { id: string }[];
      if (data.length >= expected || Date.now() > deadline) {
        for (const e of data) world.eventIds.push({ id: String(e.id), project: p.index });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export async function buildWorld(baseUrl: string, adminToken: string): Promise<World> {
  const runTag = Math.random().toString(36).slice(2, 8);
  const projects = await createProjects(baseUrl, adminToken, runTag);
  const world: World = { projects, actors: [], rows: new Map(), allIds: [], eventIds: [] };
  for (const p of projects) {
    await defineEntity(p.admin, FOLDER);
    await defineEntity(p.admin, NOTE);
    await grantAuthenticated(p);
    for (const user of [0, 1]) world.actors.push(await registerUser(p, user));
    world.actors.push(await createApiKey(p));
  }
  // A created grant is in force no later than 3 s after its 201 (CONTRACT "Identity"); seeding as
  // the users needs it, so retry the first write briefly rather than sleeping a fixed 3 s.
  for (const actor of world.actors.filter((a) => a.user !== 'K')) {
    const p = projects[actor.project]!;
    await retryUntilGranted(() => seedRows(world, p, actor));
  }
  await collectEventIds(world);
  return world;
}

async function retryUntilGranted(fn: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
