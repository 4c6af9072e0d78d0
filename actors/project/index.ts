import { defineActor, type ActorMessenger } from '../define.js';
import type { ActorId } from '../actor-id.js';
import type { Logger } from '../../runtime/log.js';
import { runBackfill } from '../../runtime/control/transition-backfill.js';
import { deleteProjectRow, readProject, updateProjectRow } from '../../runtime/control/project-store.js';
import type { SchemaChange, SchemaChangeResult } from '../../runtime/control/schema-change.js';
import { applySchemaChange } from '../../runtime/control/schema-migration.js';
import { runSchemaCommand, type SchemaCommand, type SchemaCommandResult } from '../../runtime/control/schema-commands.js';
import { notFound } from '../../runtime/errors/service-error.js';
import type { Envelope } from '../../runtime/governance/envelope.js';
import { writeEnvelope } from '../../runtime/governance/store.js';
import { mergeQuotaPatch, parseQuotaBody } from '../../runtime/quota/body.js';
import { checkQuotaCap } from '../../runtime/quota/caps.js';
import { BudgetOwner, type LeaseReply, type LeaseRequest } from '../../runtime/quota/budget-owner.js';
import { deleteQuota, insertQuota, readQuota, updateQuota, type QuotaRecord } from '../../runtime/quota/store.js';
import type { ProjectRow } from '../../runtime/operations/types.js';
import { CompiledPublication } from '../../runtime/publication/compiled-publication.js';
import type { ControlActorDeps } from '../control-deps.js';
import { requireOrganizationOf } from '../../runtime/control/organization-store.js';
import { runProjectCommand, type ProjectCommand } from '../../runtime/versioning/commands.js';
import { runBranchCommand, type BranchCommand, type BranchCommandResult } from '../../runtime/branches/branch-commands.js';
import { directChangeBranch, refuseDirectSchemaChange } from '../../runtime/branches/protection.js';

export const PROJECT_KIND = 'project';

export interface ProjectMessages {
  update: { name?: string; state?: string; settings?: Record<string, unknown>; organizationId?: string | null };
  /** Versioning and installable surfaces (runtime/versioning/commands.ts). */
  command: ProjectCommand;
  delete: Record<string, never>;
  applySchemaChange: SchemaChange;
  /** Schema journal: migrations, rollbacks, recovery of interrupted entries, snapshots (runtime/control/schema-commands.ts). */
  schemaCommand: SchemaCommand;
  /** Branches and sandboxes: create (copy), delete, protection (runtime/branches/branch-commands.ts). */
  branchCommand: BranchCommand;
  /** Replaces the project's own governance envelope (already validated). */
  setEnvelope: { envelope: Envelope };
  /** Quota writes: the body is validated here, so a PATCH merges onto the row this writer last wrote. */
  createQuota: { quotaId: string; body: unknown };
  updateQuota: { quotaId: string; body: unknown; partial: boolean };
  deleteQuota: { quotaId: string };
  /** Cluster budget leases: a node reports what it consumed and takes a new chunk (docs/adr/0007). */
  leaseQuota: LeaseRequest;
}

interface ProjectState {
  row: ProjectRow | null;
  /** Quota budgets leased to nodes; rebuilt from the durable count when the actor activates elsewhere. */
  budgets?: BudgetOwner;
}

/** Transitions whose backfill runs on this node: a resume never starts a second one. */
const backfilling = new Set<string>();

/** The backfill runs beside the mailbox (it writes rows, not schema); its end comes back here as the contract. */
function startBackfill(ctx: { id: ActorId; system: ActorMessenger; log: Logger }, deps: ControlActorDeps, record: Record<string, unknown>): void {
  const transitionId = String(record.id);
  const branch = String(record.branch);
  if (backfilling.has(transitionId)) return;
  backfilling.add(transitionId);
  void runBackfill(deps.db, ctx.id.key, branch, transitionId, ctx.log, () => {
    const cmd: SchemaCommand = { kind: 'transitionContract', transitionId, branch, actor: 'SchemaTransition', correlationId: `transition-${transitionId}` };
    ctx.system.tell(ctx.id, 'schemaCommand', cmd);
  }).finally(() => backfilling.delete(transitionId));
}

/**
 * How long the old column outlives the contract's publication: requests already
 * served by the previous publication (on this node or, until they invalidate, others) finish against it.
 */
const CONTRACT_GRACE_MS = 2_000;

function scheduleCleanup(ctx: { id: ActorId; system: ActorMessenger }, record: Record<string, unknown>): void {
  const cmd: SchemaCommand = { kind: 'transitionCleanup', branch: String(record.branch), transitionId: String(record.id) };
  setTimeout(() => ctx.system.tell(ctx.id, 'schemaCommand', cmd), CONTRACT_GRACE_MS).unref();
}

/**
 * Single writer of a project's record, its governance envelope, its quotas, its branch
 * schemas and publication heads. Schema changes queue in this mailbox, so
 * two changes never race to the same publication version; data-plane
 * requests never pass through here.
 */
export const projectActor = defineActor<ProjectState, ControlActorDeps>({
  kind: PROJECT_KIND,
  activate: async (id, deps) => ({ row: await readProject(deps.db, null, id.key) }),
  handlers: {
    async update(ctx, msg: ProjectMessages['update'], deps): Promise<ProjectRow> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      if (msg.organizationId != null) await requireOrganizationOf(deps.db, ctx.state.row.tenantId, msg.organizationId);
      const row = await updateProjectRow(deps.db, ctx.id.key, msg);
      ctx.state.row = row;
      await deps.scopes.invalidate();
      return row;
    },
    async command(ctx, msg: ProjectMessages['command'], deps): Promise<unknown> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      return runProjectCommand(deps, ctx.id.key, msg);
    },
    async delete(ctx, _msg, deps): Promise<null> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      await deleteProjectRow(deps.db, ctx.id.key);
      ctx.state.row = null;
      await deps.scopes.invalidate();
      deps.publications.invalidate(ctx.id.key);
      return null;
    },
    async applySchemaChange(ctx, msg: ProjectMessages['applySchemaChange'], deps): Promise<SchemaChangeResult> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      await refuseDirectSchemaChange(deps.db, ctx.id.key, msg.branch);
      const res = await applySchemaChange(deps.db, msg);
      // Compile before the reply, so the caller's next request already sees the new publication on this node.
      deps.publications.install(new CompiledPublication(res.publication));
      return res;
    },
    async schemaCommand(ctx, msg: ProjectMessages['schemaCommand'], deps): Promise<SchemaCommandResult> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      const direct = directChangeBranch(msg);
      if (direct !== null) await refuseDirectSchemaChange(deps.db, ctx.id.key, direct);
      const res = await runSchemaCommand(deps.db, ctx.state.row.tenantId, ctx.id.key, msg);
      const pub = res.kind === 'migrated' ? res.result.publication
        : res.kind === 'recovered' ? res.outcome.result?.publication
        : res.kind === 'transition' ? res.outcome.publication?.publication : undefined;
      if (pub !== undefined) deps.publications.install(new CompiledPublication(pub));
      const transition = res.kind === 'transition' ? res.outcome : res.kind === 'recovered' ? res.transition : undefined;
      if (transition?.backfill === true) startBackfill(ctx, deps, transition.record);
      if (transition?.cleanup === true) scheduleCleanup(ctx, transition.record);
      return res;
    },
    async branchCommand(ctx, msg: ProjectMessages['branchCommand'], deps): Promise<BranchCommandResult> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      const res = await runBranchCommand(deps.db, ctx.id.key, msg);
      // A branch name can come back with other tables after a delete: no node may keep the old publication.
      if (res.kind === 'deleted' || (res.kind === 'branch' && res.schemaChanged) || res.kind === 'sandbox') deps.publications.invalidate(ctx.id.key);
      return res;
    },
    async setEnvelope(ctx, msg: ProjectMessages['setEnvelope'], deps): Promise<null> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      await writeEnvelope(deps.db, ctx.id.key, msg.envelope);
      // Every descendant's effective envelope changes too; the reply waits until nodes dropped theirs.
      await deps.governance.invalidate();
      return null;
    },
    async createQuota(ctx, msg: ProjectMessages['createQuota'], deps): Promise<QuotaRecord> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      const fields = await checkQuotaCap(deps.governance, ctx.id.key, parseQuotaBody(msg.body));
      const rec = await insertQuota(deps.db, msg.quotaId, ctx.state.row.tenantId, ctx.id.key, fields);
      // The reply waits until nodes dropped the project's quotas: the quota applies from the next request.
      await deps.quotas?.invalidate(ctx.id.key);
      return rec;
    },
    async updateQuota(ctx, msg: ProjectMessages['updateQuota'], deps): Promise<QuotaRecord | null> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      const current = await readQuota(deps.db, ctx.id.key, msg.quotaId);
      if (current === null) return null;
      const fields = await checkQuotaCap(deps.governance, ctx.id.key, msg.partial ? mergeQuotaPatch(current, msg.body) : parseQuotaBody(msg.body));
      const rec = await deps.db.transaction((tx) => updateQuota(tx, ctx.id.key, msg.quotaId, fields));
      await deps.quotas?.invalidate(ctx.id.key);
      return rec;
    },
    async deleteQuota(ctx, msg: ProjectMessages['deleteQuota'], deps): Promise<boolean> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      const gone = await deleteQuota(deps.db, ctx.id.key, msg.quotaId);
      if (gone) await deps.quotas?.invalidate(ctx.id.key);
      return gone;
    },
    async leaseQuota(ctx, msg: ProjectMessages['leaseQuota'], deps): Promise<LeaseReply | null> {
      if (ctx.state.row === null) throw notFound('Project.NotFound', 'project not found');
      ctx.state.budgets ??= new BudgetOwner(deps.db, ctx.id.key);
      return ctx.state.budgets.lease(msg);
    },
  },
});
