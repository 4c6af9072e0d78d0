import { conflict, notFound } from '../../errors/service-error.js';
import { projectRelatives, readProject } from '../../control/project-store.js';
import { planChange, readHead } from '../../control/schema-change.js';
import type { EntityDef, FieldDef, ProjectModel } from '../../publication/model.js';
import { control } from '../envelopes.js';
import type { DeclaredSpec } from '../types.js';
import { checkId, recordOp } from './organizations.js';
import { RECORD_SCHEMAS as RS } from './record-schemas.js';

/** A field as `POST /api/Schema/entities` takes it: only the parts that say something. */
const fieldBody = (f: FieldDef): Record<string, unknown> => ({
  name: f.name, type: f.type, nullable: f.nullable,
  ...(f.unique ? { unique: true } : {}),
  ...(f.default === null || f.default === undefined ? {} : { default: f.default }),
  ...(f.type === 'Enum' ? { values: f.values } : {}),
  ...(f.references === null ? {} : { references: f.references }),
});

/** Entities in an order where each one's references exist before it (self-references are fine). */
function creationOrder(model: ProjectModel): EntityDef[] {
  const done = new Set<string>();
  const out: EntityDef[] = [];
  let rest = [...model.entities];
  while (rest.length > 0) {
    const ready = rest.filter((e) => e.fields.every((f) => f.references === null || f.references === e.entityName || done.has(f.references)));
    // A reference cycle: apply the rest in name order and let planning say what it refuses.
    const next = ready.length > 0 ? ready : rest;
    for (const e of next) {
      out.push(e);
      done.add(e.entityName);
    }
    rest = rest.filter((e) => !done.has(e.entityName));
  }
  return out;
}

/**
 * `POST /api/ProjectRecord/{id}/adopt-template { templateProjectId }`: the
 * template project's `main` model becomes the (empty) target's, one entity
 * per publication. Every change is planned in memory first, so a template
 * the target cannot take is refused before anything is applied.
 */
export const ADOPT_TEMPLATE_SPEC: DeclaredSpec = recordOp('ControlPlane.ProjectRecord.AdoptTemplate', { scope: 'none' }, {
  summary: 'Give an empty project the entities of a template project\'s main head', routes: [{ method: 'POST', path: 'ProjectRecord/:id/adopt-template' }],
  params: { id: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } },
  body: RS.ControlAdoptTemplateInput, reasons: { prefix: 'Project' },
  output: { status: 200, body: RS.ControlTemplateAdopted },
}, async (ctx) => {
  const db = ctx.services.db;
  const target = await readProject(db, null, checkId(ctx.inv.params.id, 'Project'));
  if (target === null) throw notFound('Project.NotFound', 'project not found');
  const b = ctx.inv.body as { templateProjectId: string };
  const templateId = checkId(b.templateProjectId, 'Project', 'templateProjectId');
  const template = await readProject(db, null, templateId);
  if (template === null) throw notFound('Project.TemplateNotFound', 'template project not found');
  if (template.id === target.id) throw conflict('Project.TemplateIsTarget', 'a project cannot adopt itself as a template', 'templateProjectId');
  const source = await readHead(db, template.id, 'main', false);
  const head = await readHead(db, target.id, 'main', false);
  if (head.model.entities.length > 0) throw conflict('Project.NotEmpty', 'the project already defines entities; adopt a template into an empty project', 'id');
  const bodies = creationOrder(source.model).map((e) => ({ entityName: e.entityName, fields: e.fields.map(fieldBody), softDelete: e.softDelete }));
  let model = head.model;
  for (const body of bodies) model = planChange(model, head.schema, 'create', body).model;
  let publicationVersion = head.version;
  for (const body of bodies) {
    const res = await ctx.services.control.applySchemaChange({
      tenantId: target.tenantId, projectId: target.id, branch: 'main', action: 'create', body,
      actor: ctx.actor.label, correlationId: ctx.inv.correlationId,
    });
    publicationVersion = res.publication.version;
  }
  return control(ctx, 'ProjectRecord', 'templateAdopted', {
    projectId: target.id, templateProjectId: template.id, templatePublicationVersion: source.version,
    entities: bodies.map((x) => x.entityName), publicationVersion,
  });
});

/** `GET /api/root-project/current`: the topmost ancestor of the scoped project (itself when it has no parent). */
export const ROOT_PROJECT_SPEC: DeclaredSpec = recordOp('ControlPlane.RootProject.Current', { scope: 'project' }, {
  summary: 'The topmost ancestor of the scoped project (itself when it has no parent)', routes: [{ method: 'GET', path: 'root-project/current' }],
  output: { status: 200, body: RS.ControlProjectRecordSingle },
}, async (ctx) => {
  const project = ctx.scope!.project;
  const ancestors = project.parentProjectId === null ? [] : await projectRelatives(ctx.services.db, project.id, 'ancestors');
  const root = ancestors.at(-1) ?? (await readProject(ctx.services.db, null, project.id)) ?? project;
  return control(ctx, 'ProjectRecord', 'read', root);
});
