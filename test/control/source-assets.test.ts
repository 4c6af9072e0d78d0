/**
 * Source assets over HTTP (CONTRACT "Authored code" → "Source assets"): folders and files,
 * their records and errors, path rules, tree and shape, admin only. Raw bodies, downloads
 * and branches are in source-assets-raw.test.ts.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken } from './support.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const FILE_KEYS = ['contentType', 'createdAt', 'id', 'path', 'sha256', 'size', 'updatedAt', 'version'];
const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

forEachBackend('source assets', (backend: Backend) => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  const project = async (): Promise<Client> => (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
  const file = async (c: Client, body: object): Promise<any> => controlData(await c.post('/api/SourceAsset/file', body), 201, 'SourceAsset', 'created');

  it('POST folder → 201 { id, path, createdAt }; missing parents are created; GET folder lists in path order', async () => {
    const c = await project();
    const f = controlData(await c.post('/api/SourceAsset/folder', { path: 'src/lib' }), 201, 'SourceAsset', 'created');
    assert.deepEqual(Object.keys(f).sort(), ['createdAt', 'id', 'path']);
    assert.equal(f.path, 'src/lib');
    assert.match(f.createdAt, ISO_UTC);
    const list = controlData(await c.get('/api/SourceAsset/folder'), 200, 'SourceAsset', 'listed');
    assert.deepEqual(list.map((x: any) => x.path), ['src', 'src/lib']);
    expectError(await c.post('/api/SourceAsset/folder', { path: 'src/lib' }), 409, 'CONFLICT', 'SourceAsset.PathTaken', 'path');
  });

  it('a path that is not /-separated [A-Za-z0-9._-] segments answers 422 SourceAsset.InvalidPath, on every route that takes one', async () => {
    const c = await project();
    const bad = ['../x', 'a/../b', './a', 'a/./b', '.', '..', '/abs', 'a//b', 'a/', '', 'sp ace', 'a\\b', 'é.js', 'a?b', `${'a'.repeat(513)}`, 42];
    for (const path of bad) {
      expectError(await c.post('/api/SourceAsset/folder', { path }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidPath', 'path');
      expectError(await c.post('/api/SourceAsset/file', { path, content: 'x' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidPath', 'path');
    }
    expectError(await c.post('/api/SourceAsset/folder', {}), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidPath', 'path');
    expectError(await c.get('/api/SourceAsset/file/by-path?path=..%2Fx'), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidPath', 'path');
    expectError(await c.get('/api/SourceAsset/file/by-path'), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidPath', 'path');
    // 512 characters and names with dots are paths.
    const long = `${'a'.repeat(255)}/${'b'.repeat(256)}`;
    assert.equal(long.length, 512);
    controlData(await c.post('/api/SourceAsset/folder', { path: long }), 201);
    controlData(await c.post('/api/SourceAsset/folder', { path: '.config/a..b/_x-1.d' }), 201);
    const f = await file(c, { path: 'a.js', content: '1' });
    expectError(await c.put(`/api/SourceAsset/file/${f.id}/rename`, { path: 'x/../y' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidPath', 'path');
  });

  it('POST file with content → 201 record with sha256 and version 1; text is shown inline on reads, by id, by path and in lists', async () => {
    const c = await project();
    const f = await file(c, { path: 'src/handlers/hello.ts', content: 'export default () => 1;\n' });
    assert.deepEqual(Object.keys(f).filter((k) => k !== 'content').sort(), FILE_KEYS);
    assert.equal(f.sha256, sha('export default () => 1;\n'));
    assert.equal(f.size, 24);
    assert.equal(f.version, 1);
    assert.equal(f.contentType, 'application/typescript');
    assert.match(f.updatedAt, ISO_UTC);
    const read = controlData(await c.get(`/api/SourceAsset/file/${f.id}`), 200, 'SourceAsset', 'read');
    assert.equal(read.content, 'export default () => 1;\n');
    const byPath = controlData(await c.get('/api/SourceAsset/file/by-path?path=src/handlers/hello.ts'), 200, 'SourceAsset', 'read');
    assert.equal(byPath.id, f.id);
    assert.deepEqual(controlData(await c.get('/api/SourceAsset/folder'), 200).map((x: any) => x.path), ['src', 'src/handlers']);
    await file(c, { path: 'README.md', content: '# hi' });
    await file(c, { path: 'data.json', contentBase64: Buffer.from('{"a":1}').toString('base64') });
    const all = controlData(await c.get('/api/SourceAsset/file'), 200, 'SourceAsset', 'listed');
    assert.deepEqual(all.map((x: any) => x.path), ['README.md', 'data.json', 'src/handlers/hello.ts']);
    assert.equal(all[1].content, '{"a":1}', 'JSON is text');
    assert.equal(all[1].contentType, 'application/json');
    const src = controlData(await c.get('/api/SourceAsset/file?prefix=src/'), 200, 'SourceAsset', 'listed');
    assert.deepEqual(src.map((x: any) => x.path), ['src/handlers/hello.ts']);
  });

  it('content is not inline for bytes or for text over 1 MiB', async () => {
    const c = await project();
    const bin = await file(c, { path: 'img.png', contentBase64: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]).toString('base64') });
    assert.equal(bin.contentType, 'image/png');
    assert.equal(controlData(await c.get(`/api/SourceAsset/file/${bin.id}`), 200).content, undefined);
    const big = 'x'.repeat(1024 * 1024 + 1);
    const large = await file(c, { path: 'big.txt', content: big });
    assert.equal(large.size, big.length);
    assert.equal(controlData(await c.get(`/api/SourceAsset/file/${large.id}`), 200).content, undefined);
    const edge = await file(c, { path: 'edge.txt', content: 'y'.repeat(1024 * 1024) });
    assert.equal(controlData(await c.get(`/api/SourceAsset/file/${edge.id}`), 200).content.length, 1024 * 1024);
    const typed = await file(c, { path: 'notes', content: 'plain', contentType: 'text/x-notes; charset=utf-8' });
    assert.equal(typed.contentType, 'text/x-notes; charset=utf-8');
    assert.equal(controlData(await c.get(`/api/SourceAsset/file/${typed.id}`), 200).content, 'plain');
  });

  it('file body errors: none or two of content/contentBase64/blob, bad base64, unknown blob, bad contentType, unknown property, taken path, a file in the way', async () => {
    const c = await project();
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidContent', 'content');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', content: 'x', contentBase64: 'eA==' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidContent', 'contentBase64');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', contentBase64: 'not base64!' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidContent', 'contentBase64');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', contentBase64: 'eA=' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidContent', 'contentBase64');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', blob: 'a'.repeat(64) }), 422, 'VALIDATION_FAILED', 'SourceAsset.UnknownBlob', 'blob');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', blob: 'xyz' }), 422, 'VALIDATION_FAILED', 'SourceAsset.UnknownBlob', 'blob');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', content: 'x', contentType: 'text/plain\r\nX-Evil: 1' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidContentType', 'contentType');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', content: 'x', extra: 1 }), 422, 'VALIDATION_FAILED', 'SourceAsset.UnknownProperty', 'extra');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', content: 7 }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidContent', 'content');
    expectError(await c.post('/api/SourceAsset/file', '[1]'), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidBody');
    await file(c, { path: 'a.txt', content: 'x' });
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt', content: 'y' }), 409, 'CONFLICT', 'SourceAsset.PathTaken', 'path');
    expectError(await c.post('/api/SourceAsset/file', { path: 'a.txt/b.txt', content: 'y' }), 409, 'CONFLICT', 'SourceAsset.PathTaken', 'path');
    expectError(await c.post('/api/SourceAsset/folder', { path: 'a.txt' }), 409, 'CONFLICT', 'SourceAsset.PathTaken', 'path');
    controlData(await c.post('/api/SourceAsset/folder', { path: 'dir' }), 201);
    expectError(await c.post('/api/SourceAsset/file', { path: 'dir', content: 'y' }), 409, 'CONFLICT', 'SourceAsset.PathTaken', 'path');
  });

  it('PUT file/{id}/content replaces the bytes (version + 1); ifMatch must be the current sha256, else 409', async () => {
    const c = await project();
    const f = await file(c, { path: 'a.js', content: 'v1' });
    const v2 = controlData(await c.put(`/api/SourceAsset/file/${f.id}/content`, { content: 'v2', ifMatch: f.sha256 }), 200, 'SourceAsset', 'updated');
    assert.equal(v2.version, 2);
    assert.equal(v2.sha256, sha('v2'));
    assert.equal(v2.content, 'v2');
    assert.equal(v2.createdAt, f.createdAt);
    expectError(await c.put(`/api/SourceAsset/file/${f.id}/content`, { content: 'v3', ifMatch: f.sha256 }), 409, 'CONFLICT', 'SourceAsset.VersionMismatch', 'ifMatch');
    const v3 = controlData(await c.put(`/api/SourceAsset/file/${f.id}/content`, { contentBase64: Buffer.from('v3').toString('base64') }), 200);
    assert.equal(v3.version, 3);
    assert.equal(v3.content, 'v3');
    expectError(await c.put(`/api/SourceAsset/file/${f.id}/content`, {}), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidContent', 'content');
    expectError(await c.put(`/api/SourceAsset/file/${f.id}/content`, { content: 'x', ifMatch: 'nope' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidIfMatch', 'ifMatch');
    expectError(await c.put('/api/SourceAsset/file/00000000-0000-4000-8000-000000000000/content', { content: 'x' }), 404, 'NOT_FOUND', 'SourceAsset.NotFound');
  });

  it('PUT file/{id}/rename moves it (parents created, version + 1); a taken path → 409; DELETE file → 204, then 404', async () => {
    const c = await project();
    const f = await file(c, { path: 'a.js', content: 'a' });
    await file(c, { path: 'b.js', content: 'b' });
    const moved = controlData(await c.put(`/api/SourceAsset/file/${f.id}/rename`, { path: 'lib/a.js' }), 200, 'SourceAsset', 'renamed');
    assert.equal(moved.path, 'lib/a.js');
    assert.equal(moved.id, f.id);
    assert.equal(moved.version, 2);
    assert.equal(moved.sha256, f.sha256);
    expectError(await c.put(`/api/SourceAsset/file/${f.id}/rename`, { path: 'b.js' }), 409, 'CONFLICT', 'SourceAsset.PathTaken', 'path');
    expectStatus(await c.delete(`/api/SourceAsset/file/${f.id}`), 204);
    expectError(await c.get(`/api/SourceAsset/file/${f.id}`), 404, 'NOT_FOUND', 'SourceAsset.NotFound');
    expectError(await c.delete(`/api/SourceAsset/file/${f.id}`), 404, 'NOT_FOUND', 'SourceAsset.NotFound');
    expectError(await c.get('/api/SourceAsset/file/not-a-uuid'), 404, 'NOT_FOUND', 'SourceAsset.NotFound');
    expectError(await c.get('/api/SourceAsset/file/by-path?path=lib/a.js'), 404, 'NOT_FOUND', 'SourceAsset.NotFound');
  });

  it('PUT folder/{id}/rename moves everything under it; into itself → 422; onto a taken path → 409', async () => {
    const c = await project();
    const src = controlData(await c.post('/api/SourceAsset/folder', { path: 'src' }), 201);
    const f = await file(c, { path: 'src/deep/x.js', content: 'x' });
    await file(c, { path: 'srcx.js', content: 'not under src' });
    controlData(await c.post('/api/SourceAsset/folder', { path: 'taken' }), 201);
    expectError(await c.put(`/api/SourceAsset/folder/${src.id}/rename`, { path: 'taken' }), 409, 'CONFLICT', 'SourceAsset.PathTaken', 'path');
    expectError(await c.put(`/api/SourceAsset/folder/${src.id}/rename`, { path: 'src/inner' }), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidPath', 'path');
    const moved = controlData(await c.put(`/api/SourceAsset/folder/${src.id}/rename`, { path: 'app/code' }), 200, 'SourceAsset', 'renamed');
    assert.deepEqual([moved.id, moved.path], [src.id, 'app/code']);
    assert.deepEqual(controlData(await c.get('/api/SourceAsset/folder'), 200).map((x: any) => x.path), ['app', 'app/code', 'app/code/deep', 'taken']);
    const read = controlData(await c.get(`/api/SourceAsset/file/${f.id}`), 200);
    assert.equal(read.path, 'app/code/deep/x.js');
    assert.equal(controlData(await c.get('/api/SourceAsset/file/by-path?path=srcx.js'), 200).path, 'srcx.js');
    expectError(await c.put('/api/SourceAsset/folder/00000000-0000-4000-8000-000000000000/rename', { path: 'q' }), 404, 'NOT_FOUND', 'SourceAsset.NotFound');
  });

  it('DELETE folder: empty → 204; not empty → 409 SourceAsset.FolderNotEmpty; ?recursive=true removes all it holds', async () => {
    const c = await project();
    const empty = controlData(await c.post('/api/SourceAsset/folder', { path: 'empty' }), 201);
    expectStatus(await c.delete(`/api/SourceAsset/folder/${empty.id}`), 204);
    expectError(await c.delete(`/api/SourceAsset/folder/${empty.id}`), 404, 'NOT_FOUND', 'SourceAsset.NotFound');
    const full = controlData(await c.post('/api/SourceAsset/folder', { path: 'full' }), 201);
    await file(c, { path: 'full/sub/a.js', content: 'a' });
    await file(c, { path: 'fullness.js', content: 'kept' });
    expectError(await c.delete(`/api/SourceAsset/folder/${full.id}`), 409, 'CONFLICT', 'SourceAsset.FolderNotEmpty');
    expectError(await c.delete(`/api/SourceAsset/folder/${full.id}?recursive=yes`), 422, 'VALIDATION_FAILED', 'SourceAsset.InvalidQuery', 'recursive');
    expectStatus(await c.delete(`/api/SourceAsset/folder/${full.id}?recursive=true`), 204);
    assert.deepEqual(controlData(await c.get('/api/SourceAsset/folder'), 200), []);
    assert.deepEqual(controlData(await c.get('/api/SourceAsset/file'), 200).map((x: any) => x.path), ['fullness.js']);
  });

  it('GET tree nests folders and files from the root; GET scope/shape counts them and their bytes', async () => {
    const c = await project();
    assert.deepEqual(controlData(await c.get('/api/SourceAsset/tree'), 200, 'SourceAsset', 'read'), { folders: [], files: [] });
    await file(c, { path: 'root.txt', content: 'r' });
    await file(c, { path: 'src/a.js', content: 'aa' });
    await file(c, { path: 'src/lib/b.js', content: 'bbb' });
    controlData(await c.post('/api/SourceAsset/folder', { path: 'docs' }), 201);
    const tree = controlData(await c.get('/api/SourceAsset/tree'), 200, 'SourceAsset', 'read');
    assert.deepEqual(tree.files.map((f: any) => f.path), ['root.txt']);
    assert.deepEqual(tree.folders.map((f: any) => f.path), ['docs', 'src']);
    const src = tree.folders[1];
    assert.deepEqual(src.files.map((f: any) => f.path), ['src/a.js']);
    assert.deepEqual(src.folders.map((f: any) => [f.path, f.files.map((x: any) => x.path), f.folders]), [['src/lib', ['src/lib/b.js'], []]]);
    assert.deepEqual(Object.keys(src.files[0]).sort(), FILE_KEYS);
    const shape = controlData(await c.get('/api/SourceAsset/scope/shape'), 200, 'SourceAsset', 'read');
    assert.deepEqual(shape, { branch: 'main', folders: 3, files: 3, bytes: 6 });
  });

  it('only the platform admin: a project user → 403, no credential → 401', async () => {
    const c = await project();
    const user = c.with({ token: await projectUserToken(c) });
    for (const [m, p] of [['GET', '/api/SourceAsset/tree'], ['POST', '/api/SourceAsset/folder'], ['GET', '/api/SourceAsset/file'], ['POST', '/api/SourceAsset/blob']] as const) {
      const r = await user.request(m, p, m === 'POST' ? { path: 'x' } : undefined);
      expectError(r, 403, 'ACCESS_DENIED', r.body.error.reasonCode);
      expectStatus(await c.with({ token: null }).request(m, p, m === 'POST' ? { path: 'x' } : undefined), 401);
    }
  });
});
