import type { ProjectModel } from './model.js';

/** A publication as stored: one version of a project branch's model, with the schema its tables live in. */
export interface PublicationRecord {
  tenantId: string;
  projectId: string;
  branch: string;
  version: number;
  schema: string;
  model: ProjectModel;
  descriptorHash: string;
  createdAt: string;
}
