import { randomUUID } from 'node:crypto';
import { ActorId, type ActorSystem } from '../actors/index.js';
import { PROJECT_KIND, type ProjectMessages } from '../actors/project/index.js';
import { TENANT_KIND, type TenantMessages } from '../actors/tenant/index.js';
import type { ControlPlaneGateway } from '../runtime/control/gateway.js';
import type { SchemaChangeResult } from '../runtime/control/schema-change.js';
import type { SchemaCommand, SchemaCommandResult } from '../runtime/control/schema-commands.js';
import type { BranchCommand, BranchCommandResult } from '../runtime/branches/branch-commands.js';
import type { Envelope } from '../runtime/governance/envelope.js';
import type { ProjectRow, TenantRow } from '../runtime/operations/types.js';
import type { OrganizationRow } from '../runtime/control/rows.js';
import type { ProjectCommand } from '../runtime/versioning/commands.js';
import type { QuotaRecord } from '../runtime/quota/store.js';
import type { LeaseReply, LeaseRequest } from '../runtime/quota/budget-owner.js';

/** Control-plane writes as messages to the owning actors. */
export class ActorControlPlane implements ControlPlaneGateway {
  constructor(private readonly system: ActorSystem) {}

  private tenant<K extends keyof TenantMessages, R>(id: string, type: K, msg: TenantMessages[K]): Promise<R> {
    return this.system.ask<R>(new ActorId(TENANT_KIND, id), type, msg);
  }

  private project<K extends keyof ProjectMessages, R>(id: string, type: K, msg: ProjectMessages[K], timeoutMs?: number): Promise<R> {
    return this.system.ask<R>(new ActorId(PROJECT_KIND, id), type, msg, timeoutMs === undefined ? undefined : { timeoutMs });
  }

  createTenant(input: { slug: string; name: string }): Promise<TenantRow> {
    return this.tenant(randomUUID(), 'create', input);
  }
  updateTenant(tenantId: string, patch: { name?: string; state?: string }): Promise<TenantRow> {
    return this.tenant(tenantId, 'update', patch);
  }
  async deleteTenant(tenantId: string): Promise<void> {
    await this.tenant(tenantId, 'delete', {});
  }
  createProject(input: { tenantId: string; slug: string; name: string; parentProjectId: string | null; organizationId?: string | null }): Promise<ProjectRow> {
    return this.tenant(input.tenantId, 'createProject', { projectId: randomUUID(), slug: input.slug, name: input.name, parentProjectId: input.parentProjectId, organizationId: input.organizationId ?? null });
  }
  updateProject(projectId: string, patch: { name?: string; state?: string; settings?: Record<string, unknown>; organizationId?: string | null }): Promise<ProjectRow> {
    return this.project(projectId, 'update', patch);
  }
  createOrganization(input: { tenantId: string; slug: string; name: string }): Promise<OrganizationRow> {
    return this.tenant(input.tenantId, 'createOrganization', { organizationId: randomUUID(), slug: input.slug, name: input.name });
  }
  updateOrganization(tenantId: string, organizationId: string, patch: { name?: string }): Promise<OrganizationRow> {
    return this.tenant(tenantId, 'updateOrganization', { organizationId, ...patch });
  }
  async deleteOrganization(tenantId: string, organizationId: string): Promise<void> {
    await this.tenant(tenantId, 'deleteOrganization', { organizationId });
  }
  projectCommand(projectId: string, command: ProjectCommand): Promise<unknown> {
    return this.project(projectId, 'command', command);
  }
  async deleteProject(projectId: string): Promise<void> {
    await this.project(projectId, 'delete', {});
  }
  applySchemaChange(change: ProjectMessages['applySchemaChange']): Promise<SchemaChangeResult> {
    // DDL on a large table can take a while; the default ask timeout is for ordinary messages.
    return this.project(change.projectId, 'applySchemaChange', change, 120_000);
  }
  schemaCommand(projectId: string, command: SchemaCommand): Promise<SchemaCommandResult> {
    return this.project(projectId, 'schemaCommand', command, 120_000);
  }
  branchCommand(projectId: string, command: BranchCommand): Promise<BranchCommandResult> {
    // A branch copies its base's rows: as long as DDL, not an ordinary message.
    return this.project(projectId, 'branchCommand', command, 120_000);
  }
  async setGovernanceEnvelope(projectId: string, envelope: Envelope): Promise<void> {
    await this.project(projectId, 'setEnvelope', { envelope });
  }
  createQuota(projectId: string, body: unknown): Promise<QuotaRecord> {
    return this.project(projectId, 'createQuota', { quotaId: randomUUID(), body });
  }
  updateQuota(projectId: string, quotaId: string, body: unknown, partial: boolean): Promise<QuotaRecord | null> {
    return this.project(projectId, 'updateQuota', { quotaId, body, partial });
  }
  deleteQuota(projectId: string, quotaId: string): Promise<boolean> {
    return this.project(projectId, 'deleteQuota', { quotaId });
  }
  leaseQuota(projectId: string, req: LeaseRequest): Promise<LeaseReply | null> {
    return this.project(projectId, 'leaseQuota', req, 5_000);
  }
}
