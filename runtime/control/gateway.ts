import type { Envelope } from '../governance/envelope.js';
import type { QuotaRecord } from '../quota/store.js';
import type { LeaseReply, LeaseRequest } from '../quota/budget-owner.js';
import type { OrganizationRow, ProjectRow, TenantRow } from './rows.js';
import type { ProjectCommand } from '../versioning/commands.js';
import type { SchemaChange, SchemaChangeResult } from './schema-change.js';
import type { SchemaCommand, SchemaCommandResult } from './schema-commands.js';
import type { BranchCommand, BranchCommandResult } from '../branches/branch-commands.js';

/**
 * Control-plane writes. Each is carried out by the actor that owns the
 * record (Tenant actor: tenant rows and its project list; Project actor:
 * project row, schema, publication head), so there is one writer per record.
 * runtime/ declares this; node/ wires it to the actor system.
 */
export interface ControlPlaneGateway {
  createTenant(input: { slug: string; name: string }): Promise<TenantRow>;
  updateTenant(tenantId: string, patch: { name?: string; state?: string }): Promise<TenantRow>;
  deleteTenant(tenantId: string): Promise<void>;
  createProject(input: { tenantId: string; slug: string; name: string; parentProjectId: string | null; organizationId?: string | null }): Promise<ProjectRow>;
  updateProject(projectId: string, patch: { name?: string; state?: string; settings?: Record<string, unknown>; organizationId?: string | null }): Promise<ProjectRow>;
  /** Organizations (Tenant actor). */
  createOrganization(input: { tenantId: string; slug: string; name: string }): Promise<OrganizationRow>;
  updateOrganization(tenantId: string, organizationId: string, patch: { name?: string }): Promise<OrganizationRow>;
  deleteOrganization(tenantId: string, organizationId: string): Promise<void>;
  /** Versioning and installable surfaces of a project (Project actor; runtime/versioning/commands.ts). */
  projectCommand(projectId: string, command: ProjectCommand): Promise<unknown>;
  deleteProject(projectId: string): Promise<void>;
  applySchemaChange(change: SchemaChange): Promise<SchemaChangeResult>;
  /** Schema journal writes (Project actor): migrations, rollbacks, recovery, snapshots. */
  schemaCommand(projectId: string, command: SchemaCommand): Promise<SchemaCommandResult>;
  /** Branches and sandboxes (Project actor): copy-on-create, delete, protection. */
  branchCommand(projectId: string, command: BranchCommand): Promise<BranchCommandResult>;
  /** Replaces a project's own governance envelope; resolves once this node (and, in cluster mode, its peers) apply it. */
  setGovernanceEnvelope(projectId: string, envelope: Envelope): Promise<void>;
  /** Quota writes (Project actor): the body is validated by the actor (422 naming the field); each applies from the next request on every node. */
  createQuota(projectId: string, body: unknown): Promise<QuotaRecord>;
  /** `partial`: PATCH semantics (only the fields present change); otherwise PUT's full body. Null when the quota is not the project's. */
  updateQuota(projectId: string, quotaId: string, body: unknown, partial: boolean): Promise<QuotaRecord | null>;
  deleteQuota(projectId: string, quotaId: string): Promise<boolean>;
  /** Cluster mode: reports a node's consumption of a quota and takes a new budget chunk from the Project actor. Null: the quota is gone. */
  leaseQuota(projectId: string, req: LeaseRequest): Promise<LeaseReply | null>;
}
