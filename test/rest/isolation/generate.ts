/**
 * Random requests for the isolation property test: a route, a credential of
 * any project, scope headers of any project (slugs or ids, sometimes a
 * tenant that does not hold the project), and ids from any project.
 */
import type { Actor, Project, World } from './fixture.js';
import { marker } from './fixture.js';

/** mulberry32: small, seedable, good enough to pick cases reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Kind =
  | 'list' | 'count' | 'read' | 'relation' | 'update' | 'replace' | 'delete' | 'batchUpdate' | 'batchDelete'
  | 'create' | 'batchCreate' | 'eventsList' | 'eventRead' | 'eventsTail' | 'me';

/** Relative weights: reads dominate, writes are frequent enough to hit foreign ids often. */
const WEIGHTS: [Kind, number][] = [
  ['list', 12], ['count', 7], ['read', 14], ['relation', 6], ['update', 10], ['replace', 4], ['delete', 5],
  ['batchUpdate', 6], ['batchDelete', 4], ['create', 6], ['batchCreate', 3],
  ['eventsList', 6], ['eventRead', 5], ['eventsTail', 2], ['me', 3],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((s, [, w]) => s + w, 0);

/** A write's intended effect on one row, checked against the oracle when it succeeds. */
export type Effect =
  | { op: 'update'; id: string; entity: 'notes' | 'folders'; text: string }
  | { op: 'replace'; id: string; entity: 'notes'; owner: string; title: string; secret: string; folder: string }
  | { op: 'delete'; id: string; entity: 'notes' }
  | { op: 'create'; entity: 'notes'; folder: string; owner: string; title: string; secret: string };

export interface GeneratedRequest {
  kind: Kind;
  method: string;
  path: string;
  body?: unknown;
  headers: Record<string, string>;
  actor: Actor;
  /** The project the scope headers name, or null when they name none (tenant not holding it). */
  headerProject: number | null;
  /** True when any id in the request belongs to a project other than the actor's. */
  foreignIds: boolean;
  effects: Effect[];
  /** A list or count: on success its rows (or count) must be exactly the scope's rows matching the title prefix. */
  expectRows?: { entity: 'notes' | 'folders'; titlePrefix: string | null };
}

const q = (filter: unknown): string => `filter=${encodeURIComponent(JSON.stringify(filter))}`;

export class RequestGenerator {
  private n = 0;

  constructor(private readonly world: World, private readonly rnd: () => number) {}

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)]!;
  }

  private kind(): Kind {
    let r = this.rnd() * TOTAL_WEIGHT;
    for (const [k, w] of WEIGHTS) if ((r -= w) < 0) return k;
    return 'list';
  }

  /** Scope headers: half the time the actor's project, else any; slugs or ids at random. */
  private scope(actor: Actor): { headers: Record<string, string>; project: number | null } {
    const target: Project = this.rnd() < 0.5 ? this.world.projects[actor.project]! : this.pick(this.world.projects);
    const projectHeader = this.rnd() < 0.5 ? target.slug : target.id;
    const roll = this.rnd();
    if (roll < 0.08) {
      // The other tenant with this project's id: names no project.
      const other = this.world.projects.find((p) => p.tenantId !== target.tenantId)!;
      return { headers: { 'x-service-tenant': this.rnd() < 0.5 ? other.tenantSlug : other.tenantId, 'x-service-project': target.id }, project: null };
    }
    if (roll < 0.12) return { headers: { 'x-service-project': projectHeader }, project: null };
    const tenantHeader = this.rnd() < 0.5 ? target.tenantSlug : target.tenantId;
    return { headers: { 'x-service-tenant': tenantHeader, 'x-service-project': projectHeader }, project: target.index };
  }

  /** An id: half the time a live row of `project`, else any id ever made (other projects, deleted ones). */
  private id(entity: 'notes' | 'folders', project: number | null): { id: string; project: number } {
    if (project !== null && this.rnd() < 0.5) {
      const live = [...this.world.rows.entries()].filter(([, r]) => r.project === project && r.entity === entity);
      if (live.length > 0) {
        const [id, r] = this.pick(live);
        return { id, project: r.project };
      }
    }
    const any = this.world.allIds.filter((x) => x.entity === entity);
    return this.pick(any);
  }

  /** The text an actor writes: its own marker; the API key writes as the row's owner. */
  private text(actor: Actor, ownerUser: number): string {
    return `${marker(actor.project, actor.user === 'K' ? ownerUser : actor.user)}upd-${this.n}`;
  }

  next(): GeneratedRequest {
    this.n++;
    const actor = this.pick(this.world.actors);
    const { headers, project } = this.scope(actor);
    const kind = this.kind();
    const base = { kind, headers: { ...headers, authorization: `Bearer ${actor.token}` } as Record<string, string>, actor, headerProject: project, effects: [] as Effect[] };
    let foreign = false;
    const use = (x: { id: string; project: number }): string => {
      if (x.project !== actor.project) foreign = true;
      return x.id;
    };
    const ownUser = actor.user === 'K' ? Math.floor(this.rnd() * 2) : actor.user;
    const filterProject = this.rnd() < 0.5 ? actor.project : Math.floor(this.rnd() * 4);
    // Ends before the user's trailing '-' so an echoed filter never reads as a stored value.
    const probePrefix = `MARK-P${filterProject}-U${Math.floor(this.rnd() * 2)}`;
    const probe = q({ title: { like: `${probePrefix}%` } });
    const made = (r: Omit<GeneratedRequest, 'foreignIds' | keyof typeof base> & Partial<typeof base>): GeneratedRequest => ({ ...base, ...r, foreignIds: foreign });
    switch (kind) {
      case 'list': {
        const entity = this.rnd() < 0.7 ? 'notes' : 'folders';
        const filtered = entity === 'notes' && this.rnd() < 0.4;
        const extra = [entity === 'notes' && this.rnd() < 0.4 ? 'include=folder' : '', filtered ? probe : '', this.rnd() < 0.2 ? 'includeTotal=true' : ''].filter((s) => s !== '');
        return made({ method: 'GET', path: `/api/${entity}?pageSize=100${extra.map((s) => `&${s}`).join('')}`, expectRows: { entity, titlePrefix: filtered ? probePrefix : null } });
      }
      case 'count': {
        const filtered = this.rnd() < 0.6;
        return made({ method: 'GET', path: `/api/notes/count${filtered ? `?${probe}` : ''}`, expectRows: { entity: 'notes', titlePrefix: filtered ? probePrefix : null } });
      }
      case 'read': {
        const entity = this.rnd() < 0.7 ? 'notes' : 'folders';
        const id = use(this.id(entity, project));
        return made({ method: 'GET', path: `/api/${entity}/${id}${entity === 'notes' && this.rnd() < 0.5 ? '?include=folder' : ''}` });
      }
      case 'relation':
        return made({ method: 'GET', path: `/api/folders/${use(this.id('folders', project))}/notes` });
      case 'update': {
        const entity = this.rnd() < 0.7 ? 'notes' : 'folders';
        const id = use(this.id(entity, project));
        const text = this.text(actor, this.ownerIndex(id, ownUser));
        return made({ method: 'PATCH', path: `/api/${entity}/${id}`, body: entity === 'notes' ? { title: text } : { name: text }, effects: [{ op: 'update', id, entity, text }] });
      }
      case 'replace': {
        // PUT writes every field, the reference included: a folder of any project.
        const id = use(this.id('notes', project));
        const owner = this.ownerSubject(actor, this.ownerIndex(id, ownUser));
        const title = this.text(actor, this.ownerIndex(id, ownUser));
        const body = { owner, title, secret: `${title}-secret`, folder: use(this.id('folders', project)) };
        return made({ method: 'PUT', path: `/api/notes/${id}`, body, effects: [{ op: 'replace', id, entity: 'notes', ...body }] });
      }
      case 'delete': {
        // Notes only: a folder's delete would touch its notes through the reference.
        const id = use(this.id('notes', project));
        return made({ method: 'DELETE', path: `/api/notes/${id}`, effects: [{ op: 'delete', id, entity: 'notes' }] });
      }
      case 'batchUpdate': {
        const ids = this.ids(project, use);
        const items = ids.map((id) => ({ id, title: this.text(actor, this.ownerIndex(id, ownUser)) }));
        return made({ method: 'PATCH', path: '/api/notes/batch', body: { items }, effects: items.map((i) => ({ op: 'update' as const, id: i.id, entity: 'notes' as const, text: i.title })) });
      }
      case 'batchDelete': {
        const ids = this.ids(project, use);
        return made({ method: 'POST', path: '/api/notes/batch/delete', body: { ids }, effects: ids.map((id) => ({ op: 'delete' as const, id, entity: 'notes' as const })) });
      }
      case 'create':
      case 'batchCreate': {
        const count = kind === 'create' ? 1 : 1 + Math.floor(this.rnd() * 2);
        const effects: Effect[] = [];
        for (let i = 0; i < count; i++) {
          const owner = this.ownerSubject(actor, ownUser);
          const mk = marker(actor.project, ownUser);
          effects.push({ op: 'create', entity: 'notes', folder: use(this.id('folders', project)), owner, title: `${mk}new-${this.n}-${i}`, secret: `${mk}new-secret-${this.n}-${i}` });
        }
        const items = effects.map((e) => e.op === 'create' ? { owner: e.owner, title: e.title, secret: e.secret, folder: e.folder } : null);
        return kind === 'create'
          ? made({ method: 'POST', path: '/api/notes', body: items[0], effects })
          : made({ method: 'POST', path: '/api/notes/batch', body: { items }, effects });
      }
      case 'eventsList':
        return made({ method: 'GET', path: '/api/events?pageSize=100' });
      case 'eventRead': {
        const e = this.pick(this.world.eventIds);
        if (e.project !== actor.project) foreign = true;
        return made({ method: 'GET', path: `/api/events/${e.id}` });
      }
      case 'eventsTail':
        // From the start of the log: a replay of every event the scope may see.
        return made({ method: 'GET', path: '/api/events/tail', headers: { ...base.headers, 'last-event-id': 'e0', accept: 'text/event-stream' } });
      case 'me':
        return made({ method: 'GET', path: '/api/identity/me' });
    }
  }

  /** 1–3 note ids, mixing the header project's and any project's. */
  private ids(project: number | null, use: (x: { id: string; project: number }) => string): string[] {
    const count = 1 + Math.floor(this.rnd() * 3);
    const out = new Set<string>();
    for (let i = 0; i < count; i++) out.add(use(this.id('notes', project)));
    return [...out];
  }

  /** The subject a write names as owner: the user itself, or for the API key user `ownerUser` of its project. */
  private ownerSubject(actor: Actor, ownerUser: number): string {
    return actor.subjectId ?? this.world.actors.find((a) => a.project === actor.project && a.user === ownerUser)!.subjectId!;
  }

  /** The user index (0/1) owning a live row, or `fallback`. */
  private ownerIndex(id: string, fallback: number): number {
    const row = this.world.rows.get(id);
    if (row === undefined) return fallback;
    const owner = this.world.actors.find((a) => a.subjectId === row.owner);
    return typeof owner?.user === 'number' ? owner.user : fallback;
  }
}
