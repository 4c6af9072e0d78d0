/**
 * Schemas of the source-asset operations (CONTRACT "Authored code" → "Source assets";
 * docs/source-assets.md), referred to by their contracts in source-assets.ts.
 */
import { schemaRef, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { ASSET_PATH_PATTERN, MAX_PATH_LENGTH } from '../../source-assets/paths.js';
import { defineSchemas } from '../contract/index.js';
import { at, controlEnvelope, controlList, controlSingle, int } from './control-schemas.js';

const assetPath = (description: string): Json => ({ type: 'string', pattern: ASSET_PATH_PATTERN, maxLength: MAX_PATH_LENGTH, description });
const sha256 = (description: string): Json => ({ type: 'string', pattern: '^[0-9a-fA-F]{64}$', description });
/** Goes out as the download's `Content-Type` header: a `type/subtype` with printable parameters, nothing that could end the header. */
const CONTENT_TYPE = '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(;[\\x20-\\x7E]*)?$';
const content = { type: 'string', description: 'The file\'s text (stored as UTF-8).' };
const contentBase64 = { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'The file\'s bytes, base64.' };

export const SOURCE_ASSET_SCHEMAS = defineSchemas({
  ControlSourceAssetFolder: {
    type: 'object', required: ['id', 'path', 'createdAt'], additionalProperties: false,
    properties: { id: uuidSchema(), path: assetPath('Folder path (no leading `/`).'), createdAt: at() },
  },
  ControlSourceAssetFile: {
    type: 'object', required: ['id', 'path', 'size', 'sha256', 'contentType', 'version', 'createdAt', 'updatedAt'], additionalProperties: false,
    properties: {
      id: uuidSchema(),
      path: assetPath('File path (no leading `/`).'),
      size: int('Bytes.'),
      sha256: sha256('Hex digest of the bytes; the download\'s ETag and `ifMatch` of a content update.'),
      contentType: { type: 'string' },
      version: int('1 when created, one more per change (content, upload, rename).', 1),
      createdAt: at(),
      updatedAt: at(),
      content: { type: 'string', description: 'Only on a single record or list read, for text (`text/*`, JavaScript, TypeScript, JSON) of at most 1 MiB.' },
    },
  },
  ControlSourceAssetFolderInput: {
    type: 'object', required: ['path'], additionalProperties: false,
    properties: { path: assetPath('Missing parent folders are created; a taken path answers 409.') },
  },
  ControlSourceAssetRenameInput: {
    type: 'object', required: ['path'], additionalProperties: false,
    properties: { path: assetPath('The new path; a taken path answers 409.') },
  },
  ControlSourceAssetFileInput: {
    type: 'object', required: ['path'], additionalProperties: false,
    description: 'Exactly one of `content`, `contentBase64` and `blob`.',
    properties: {
      path: assetPath('Missing parent folders are created; a taken path answers 409.'),
      content, contentBase64,
      blob: sha256('The sha256 of a blob uploaded with `POST /api/SourceAsset/blob`.'),
      contentType: { type: 'string', pattern: CONTENT_TYPE, maxLength: 255, description: 'Default: by the path\'s extension; else `text/plain` for `content`, `application/octet-stream` for bytes.' },
    },
  },
  ControlSourceAssetContentInput: {
    type: 'object', additionalProperties: false,
    description: 'Exactly one of `content` and `contentBase64`.',
    properties: { content, contentBase64, ifMatch: sha256('The file\'s current sha256; another one answers 409 `SourceAsset.VersionMismatch`.') },
  },
  ControlSourceAssetBlob: {
    type: 'object', required: ['sha256', 'size'], additionalProperties: false,
    properties: { sha256: sha256('Hex digest of the bytes: what `blob` of a file body names.'), size: int('Bytes.') },
  },
  ControlSourceAssetFolderNode: {
    type: 'object', required: ['path', 'folders', 'files'], additionalProperties: false,
    properties: {
      path: assetPath('Folder path.'),
      folders: { type: 'array', items: schemaRef('ControlSourceAssetFolderNode') },
      files: { type: 'array', items: schemaRef('ControlSourceAssetFile') },
    },
  },
  ControlSourceAssetTree: {
    type: 'object', required: ['folders', 'files'], additionalProperties: false,
    properties: {
      folders: { type: 'array', items: schemaRef('ControlSourceAssetFolderNode') },
      files: { type: 'array', items: schemaRef('ControlSourceAssetFile'), description: 'Files at the root.' },
    },
  },
  ControlSourceAssetShape: {
    type: 'object', required: ['branch', 'folders', 'files', 'bytes'], additionalProperties: false,
    properties: { branch: { type: 'string' }, folders: int('Folders on the branch.'), files: int('Files on the branch.'), bytes: int('Sum of the files\' sizes.') },
  },
  ControlSourceAssetFolderSingle: controlSingle('SourceAsset', ['created', 'renamed'], 'ControlSourceAssetFolder'),
  ControlSourceAssetFolderList: controlList('SourceAsset', 'ControlSourceAssetFolder'),
  ControlSourceAssetFileSingle: controlSingle('SourceAsset', ['created', 'read', 'updated', 'renamed', 'uploaded'], 'ControlSourceAssetFile'),
  ControlSourceAssetFileList: controlList('SourceAsset', 'ControlSourceAssetFile'),
  ControlSourceAssetBlobSingle: controlSingle('SourceAsset', 'created', 'ControlSourceAssetBlob'),
  ControlSourceAssetTreeSingle: controlSingle('SourceAsset', 'read', 'ControlSourceAssetTree'),
  ControlSourceAssetShapeSingle: controlEnvelope('SourceAsset', 'read', schemaRef('ControlSourceAssetShape')),
});
