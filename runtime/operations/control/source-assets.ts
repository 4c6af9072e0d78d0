import { validationFailed } from '../../errors/service-error.js';
import { createFolder, deleteFolder, listFolders, renameFolder } from '../../source-assets/folders.js';
import { createFile, deleteFile, fileByPath, fileBytes, listFiles, renameFile, replaceContent, requireFile, type FileBytes } from '../../source-assets/files.js';
import { putBlob } from '../../source-assets/blobs.js';
import { idOf, type AssetScope } from '../../source-assets/records.js';
import { requirePath, MAX_PATH_LENGTH } from '../../source-assets/paths.js';
import { defaultContentType } from '../../source-assets/content-types.js';
import { shapeOf, treeOf } from '../../source-assets/tree.js';
import { control, noContent } from '../envelopes.js';
import { conditional } from './etag.js';
import { noGrants, type Result, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { READ_ERRORS, WRITE_ERRORS, type OperationContract, type TagDecl } from '../contract/index.js';
import { SOURCE_ASSET_SCHEMAS as S } from './source-asset-schemas.js';

/** CONTRACT "Source assets": raw bodies (upload, blob) up to 100 MiB; every other route keeps MAX_BODY_BYTES. */
export const SOURCE_ASSET_RAW_MAX_BYTES = 100 * 1024 * 1024;

const TAG: TagDecl = { name: 'SourceAssets', description: 'The branch-scoped tree of folders and files authored code is built from (copy-on-create with branches).' };
const UNMETERED = { unit: 'none', why: 'authoring the project\'s code, platform admin only; invocations of that code are what is metered' } as const;

type AssetContract = Omit<OperationContract, 'tag' | 'errors' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'errors'>>;

/** Project- and branch-scoped (X-Service-Branch as for entities), platform admin only, never metered. */
const assetOp = (id: string, contract: AssetContract, execute: OperationSpec['execute'], extra: Partial<OperationSpec> = {}): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute, ...extra,
  contract: { tag: TAG, errors: contract.body === undefined && contract.rawBodyMediaType === undefined ? READ_ERRORS : WRITE_ERRORS, metering: UNMETERED, stability: 'beta', ...contract },
});

const REASONS = {
  prefix: 'SourceAsset',
  fields: { path: 'SourceAsset.InvalidPath', content: 'SourceAsset.InvalidContent', contentBase64: 'SourceAsset.InvalidContent', blob: 'SourceAsset.UnknownBlob', contentType: 'SourceAsset.InvalidContentType', ifMatch: 'SourceAsset.InvalidIfMatch' },
};
const FOLDER_ID = { id: { description: 'Folder id.', schema: { type: 'string', format: 'uuid' } } };
const FILE_ID = { id: { description: 'File id.', schema: { type: 'string', format: 'uuid' } } };

const scopeOf = (ctx: OperationContext): AssetScope => ({ projectId: ctx.scope!.project.id, branch: ctx.scope!.branch });
const db = (ctx: OperationContext) => ctx.services.db;
const pathOf = (ctx: OperationContext): string => requirePath((ctx.inv.body as { path: unknown }).path);

/** `content` (text) or `contentBase64` (bytes), exactly one; a file body may name a `blob` instead. */
function bytesOf(body: { content?: string; contentBase64?: string; blob?: string }, blobAllowed: boolean): FileBytes & { text: boolean } {
  const keys: Array<'content' | 'contentBase64' | 'blob'> = blobAllowed ? ['content', 'contentBase64', 'blob'] : ['content', 'contentBase64'];
  const given = keys.filter((k) => body[k] !== undefined);
  const names = blobAllowed ? '`content`, `contentBase64` or `blob`' : '`content` or `contentBase64`';
  if (given.length !== 1) throw validationFailed('SourceAsset.InvalidContent', `give exactly one of ${names}`, given[1] ?? 'content');
  if (body.content !== undefined) return { bytes: Buffer.from(body.content, 'utf8'), text: true };
  if (body.contentBase64 !== undefined) {
    if (body.contentBase64.length % 4 !== 0) throw validationFailed('SourceAsset.InvalidContent', '`contentBase64` is not base64 (its length is not a multiple of 4)', 'contentBase64');
    return { bytes: Buffer.from(body.contentBase64, 'base64'), text: false };
  }
  return { blob: body.blob!, text: false };
}

const folders = {
  create: assetOp('ControlPlane.SourceAsset.CreateFolder', {
    summary: 'Create a folder (missing parents too)', routes: [{ method: 'POST', path: 'SourceAsset/folder' }],
    body: S.ControlSourceAssetFolderInput, reasons: REASONS, output: { status: 201, body: S.ControlSourceAssetFolderSingle },
  }, async (ctx) => control(ctx, 'SourceAsset', 'created', await createFolder(db(ctx), scopeOf(ctx), pathOf(ctx)), 201)),
  list: assetOp('ControlPlane.SourceAsset.ListFolders', {
    summary: 'List the branch\'s folders in path order', routes: [{ method: 'GET', path: 'SourceAsset/folder' }], output: { status: 200, body: S.ControlSourceAssetFolderList },
  }, async (ctx) => control(ctx, 'SourceAsset', 'listed', await listFolders(db(ctx), scopeOf(ctx)))),
  rename: assetOp('ControlPlane.SourceAsset.RenameFolder', {
    summary: 'Move a folder with everything under it', routes: [{ method: 'PUT', path: 'SourceAsset/folder/:id/rename' }], params: FOLDER_ID,
    body: S.ControlSourceAssetRenameInput, reasons: REASONS, output: { status: 200, body: S.ControlSourceAssetFolderSingle },
  }, async (ctx) => control(ctx, 'SourceAsset', 'renamed', await renameFolder(db(ctx), scopeOf(ctx), idOf(ctx.inv.params.id, 'folder'), pathOf(ctx)))),
  delete: assetOp('ControlPlane.SourceAsset.DeleteFolder', {
    summary: 'Delete a folder: 409 `SourceAsset.FolderNotEmpty` unless empty or `?recursive=true`', routes: [{ method: 'DELETE', path: 'SourceAsset/folder/:id' }], params: FOLDER_ID,
    query: { recursive: { description: '`true`: delete what the folder holds too.', schema: { type: 'string', enum: ['true', 'false'] } } },
    output: { status: 204 }, errors: [400, 401, 403, 404, 409, 422],
  }, async (ctx) => {
    const recursive = ctx.inv.query.get('recursive') ?? 'false';
    if (recursive !== 'true' && recursive !== 'false') throw validationFailed('SourceAsset.InvalidQuery', '`recursive` is `true` or `false`', 'recursive');
    await deleteFolder(db(ctx), scopeOf(ctx), idOf(ctx.inv.params.id, 'folder'), recursive === 'true');
    return noContent;
  }),
};

const files = {
  create: assetOp('ControlPlane.SourceAsset.CreateFile', {
    summary: 'Create a file from `content`, `contentBase64` or an uploaded `blob` (missing parent folders are created)', routes: [{ method: 'POST', path: 'SourceAsset/file' }],
    body: S.ControlSourceAssetFileInput, reasons: REASONS, output: { status: 201, body: S.ControlSourceAssetFileSingle },
  }, async (ctx) => {
    const b = ctx.inv.body as { path: string; content?: string; contentBase64?: string; blob?: string; contentType?: string };
    const path = pathOf(ctx);
    const src = bytesOf(b, true);
    const file = await createFile(db(ctx), scopeOf(ctx), path, src, b.contentType ?? defaultContentType(path, src.text));
    return control(ctx, 'SourceAsset', 'created', file, 201);
  }),
  list: assetOp('ControlPlane.SourceAsset.ListFiles', {
    summary: 'List the branch\'s files in path order', routes: [{ method: 'GET', path: 'SourceAsset/file' }],
    query: { prefix: { description: 'Only files whose path starts with this string (`src/`).', schema: { type: 'string', maxLength: MAX_PATH_LENGTH } } },
    output: { status: 200, body: S.ControlSourceAssetFileList },
  }, async (ctx) => {
    const prefix = ctx.inv.query.get('prefix') ?? null;
    if (prefix !== null && prefix.length > MAX_PATH_LENGTH) throw validationFailed('SourceAsset.InvalidPath', `'prefix' is at most ${MAX_PATH_LENGTH} characters`, 'prefix');
    return control(ctx, 'SourceAsset', 'listed', await listFiles(db(ctx), scopeOf(ctx), prefix));
  }),
  byPath: assetOp('ControlPlane.SourceAsset.ReadFileByPath', {
    summary: 'Read a file by its path', routes: [{ method: 'GET', path: 'SourceAsset/file/by-path' }],
    query: { path: { description: 'The file\'s path.', required: true } }, output: { status: 200, body: S.ControlSourceAssetFileSingle },
  }, async (ctx) => control(ctx, 'SourceAsset', 'read', await fileByPath(db(ctx), scopeOf(ctx), requirePath(ctx.inv.query.get('path'))))),
  read: assetOp('ControlPlane.SourceAsset.ReadFile', {
    summary: 'Read a file\'s record (and its text, when it is text of at most 1 MiB)', routes: [{ method: 'GET', path: 'SourceAsset/file/:id' }], params: FILE_ID,
    output: { status: 200, body: S.ControlSourceAssetFileSingle },
  }, async (ctx) => control(ctx, 'SourceAsset', 'read', await requireFile(db(ctx), scopeOf(ctx), idOf(ctx.inv.params.id, 'file')))),
  content: assetOp('ControlPlane.SourceAsset.UpdateContent', {
    summary: 'Replace a file\'s bytes (with `ifMatch`: only while its sha256 is that one, else 409)', routes: [{ method: 'PUT', path: 'SourceAsset/file/:id/content' }], params: FILE_ID,
    body: S.ControlSourceAssetContentInput, reasons: REASONS, output: { status: 200, body: S.ControlSourceAssetFileSingle },
  }, async (ctx) => {
    const b = ctx.inv.body as { content?: string; contentBase64?: string; ifMatch?: string };
    const id = idOf(ctx.inv.params.id, 'file');
    const src = bytesOf(b, false) as { bytes: Buffer };
    return control(ctx, 'SourceAsset', 'updated', await replaceContent(db(ctx), scopeOf(ctx), id, src.bytes, b.ifMatch ?? null));
  }),
  rename: assetOp('ControlPlane.SourceAsset.RenameFile', {
    summary: 'Move a file to another path', routes: [{ method: 'PUT', path: 'SourceAsset/file/:id/rename' }], params: FILE_ID,
    body: S.ControlSourceAssetRenameInput, reasons: REASONS, output: { status: 200, body: S.ControlSourceAssetFileSingle },
  }, async (ctx) => control(ctx, 'SourceAsset', 'renamed', await renameFile(db(ctx), scopeOf(ctx), idOf(ctx.inv.params.id, 'file'), pathOf(ctx)))),
  delete: assetOp('ControlPlane.SourceAsset.DeleteFile', {
    summary: 'Delete a file', routes: [{ method: 'DELETE', path: 'SourceAsset/file/:id' }], params: FILE_ID, output: { status: 204 },
  }, async (ctx) => {
    await deleteFile(db(ctx), scopeOf(ctx), idOf(ctx.inv.params.id, 'file'));
    return noContent;
  }),
};

/** Raw bodies: the exact bytes, any Content-Type, up to SOURCE_ASSET_RAW_MAX_BYTES (the adapter answers 413 past it). */
const RAW = { rawBody: true, maxBodyBytes: SOURCE_ASSET_RAW_MAX_BYTES } as const;
const RAW_ERRORS = [400, 401, 403, 404, 409, 413, 422];

/** An If-Match header on an upload is the file's sha256, quoted as an ETag or bare. */
const ifMatchOf = (ctx: OperationContext): string | null => (ctx.inv.ifMatch === null ? null : ctx.inv.ifMatch.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1'));

const raw = {
  upload: assetOp('ControlPlane.SourceAsset.Upload', {
    summary: 'Replace a file\'s bytes with the raw request body (up to 100 MiB; `If-Match: "<sha256>"` optional)', routes: [{ method: 'PUT', path: 'SourceAsset/file/:id/upload' }], params: FILE_ID,
    rawBodyMediaType: 'application/octet-stream', output: { status: 200, body: S.ControlSourceAssetFileSingle }, errors: RAW_ERRORS,
  }, async (ctx) => {
    const id = idOf(ctx.inv.params.id, 'file');
    return control(ctx, 'SourceAsset', 'uploaded', await replaceContent(db(ctx), scopeOf(ctx), id, ctx.inv.rawBody ?? Buffer.alloc(0), ifMatchOf(ctx)));
  }, RAW),
  blob: assetOp('ControlPlane.SourceAsset.CreateBlob', {
    summary: 'Store the raw request body as a blob (up to 100 MiB); a file body names it by `blob`', routes: [{ method: 'POST', path: 'SourceAsset/blob' }],
    rawBodyMediaType: 'application/octet-stream', output: { status: 201, body: S.ControlSourceAssetBlobSingle }, errors: RAW_ERRORS,
  }, async (ctx) => control(ctx, 'SourceAsset', 'created', await putBlob(db(ctx), ctx.scope!.project.id, ctx.inv.rawBody ?? Buffer.alloc(0)), 201), RAW),
  download: assetOp('ControlPlane.SourceAsset.Download', {
    summary: 'The file\'s bytes with its Content-Type and `ETag: "<sha256>"` (304 for a matching If-None-Match)', routes: [{ method: 'GET', path: 'SourceAsset/file/:id/download' }], params: FILE_ID,
    headers: { 'If-None-Match': { description: 'An ETag from an earlier download: 304 when the bytes are still those.' } },
    output: { status: 200, mediaType: 'application/octet-stream', conditional: true },
  }, async (ctx): Promise<Result> => {
    const { file, bytes } = await fileBytes(db(ctx), scopeOf(ctx), idOf(ctx.inv.params.id, 'file'));
    return conditional(ctx, { body: bytes, etag: `"${file.sha256}"` }, { 'Content-Type': file.contentType });
  }, { requestHeaders: ['if-none-match'] }),
};

const views = {
  tree: assetOp('ControlPlane.SourceAsset.Tree', {
    summary: 'The branch\'s folders and files as a tree from the root', routes: [{ method: 'GET', path: 'SourceAsset/tree' }], output: { status: 200, body: S.ControlSourceAssetTreeSingle },
  }, async (ctx) => control(ctx, 'SourceAsset', 'read', await treeOf(db(ctx), scopeOf(ctx)))),
  shape: assetOp('ControlPlane.SourceAsset.Shape', {
    summary: 'How many folders and files the branch holds, and their bytes', routes: [{ method: 'GET', path: 'SourceAsset/scope/shape' }], output: { status: 200, body: S.ControlSourceAssetShapeSingle },
  }, async (ctx) => control(ctx, 'SourceAsset', 'read', await shapeOf(db(ctx), scopeOf(ctx)))),
};

/** `/api/SourceAsset/…` (CONTRACT "Authored code" → "Source assets"; docs/source-assets.md). */
export const SOURCE_ASSET_SPECS: Record<string, DeclaredSpec> = {
  ...Object.fromEntries(Object.entries(folders).map(([k, v]) => [`${k}Folder`, v])),
  ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`${k}File`, v])),
  ...raw, ...views,
};
