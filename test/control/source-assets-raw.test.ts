/**
 * Source assets' raw bodies and branches (CONTRACT "Source assets"): `POST blob` and
 * `PUT file/{id}/upload` take any bytes up to 100 MiB (413 past it, by declared length and
 * by streamed length), `GET file/{id}/download` answers them with an ETag and 304, and a new
 * branch starts with a copy of its base's assets that neither side's changes reach.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug } from './support.js';
import { download, rawRequest, requestHead, sendBytes } from './source-assets-support.js';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;
/** The test server's MAX_UPLOAD_BYTES, so an over-limit body can really be streamed. */
const UPLOAD_LIMIT = 64 * 1024;

forEachBackend('source assets: raw bodies and branches', (backend: Backend) => {
  let server: TestServer;
  let lowered: TestServer;
  before(async () => {
    server = await startServer({ backend });
    lowered = await startServer({ backend, env: { MAX_UPLOAD_BYTES: String(UPLOAD_LIMIT) } });
  });
  after(async () => {
    await server?.close();
    await lowered?.close();
  });

  const project = async (s = server): Promise<Client> => (await bootstrapProject(s.url, s.adminToken, newSlug())).client;

  it('POST blob stores the raw body → 201 { sha256, size }; a file made from it has those bytes; the same bytes again are the same blob', async () => {
    const c = await project();
    const bytes = randomBytes(300 * 1024);
    const r = await sendBytes(c, 'POST', '/api/SourceAsset/blob', bytes, { 'content-type': 'image/x-anything' });
    const blob = controlData({ ...r, text: '' } as any, 201, 'SourceAsset', 'created');
    assert.deepEqual(blob, { sha256: sha(bytes), size: bytes.length });
    const again = await sendBytes(c, 'POST', '/api/SourceAsset/blob', bytes);
    assert.deepEqual(again.body.data, blob);
    const f = controlData(await c.post('/api/SourceAsset/file', { path: 'assets/noise.bin', blob: blob.sha256 }), 201);
    assert.equal(f.sha256, blob.sha256);
    assert.equal(f.size, bytes.length);
    assert.equal(f.contentType, 'application/octet-stream');
    const d = await download(c, f.id);
    assert.equal(d.status, 200);
    assert.ok(d.bytes.equals(bytes));
    // Uppercase hex names the same blob; a blob of another project is unknown here.
    controlData(await c.post('/api/SourceAsset/file', { path: 'copy.bin', blob: blob.sha256.toUpperCase() }), 201);
    const other = await project();
    expectError(await other.post('/api/SourceAsset/file', { path: 'x.bin', blob: blob.sha256 }), 422, 'VALIDATION_FAILED', 'SourceAsset.UnknownBlob', 'blob');
  });

  it('GET file/{id}/download: raw bytes, the file\'s Content-Type, ETag "<sha256>", 304 for a matching If-None-Match', async () => {
    const c = await project();
    const f = controlData(await c.post('/api/SourceAsset/file', { path: 'app.js', content: 'export default 1;\n' }), 201);
    const d = await download(c, f.id);
    assert.equal(d.status, 200);
    assert.equal(d.bytes.toString('utf8'), 'export default 1;\n');
    assert.equal(d.headers.get('content-type'), 'text/javascript');
    assert.equal(d.headers.get('etag'), `"${f.sha256}"`);
    const notModified = await download(c, f.id, { 'if-none-match': `"${f.sha256}"` });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.bytes.length, 0);
    assert.equal(notModified.headers.get('etag'), `"${f.sha256}"`);
    assert.equal((await download(c, f.id, { 'if-none-match': `W/"${f.sha256}", "other"` })).status, 304);
    assert.equal((await download(c, f.id, { 'if-none-match': '"stale"' })).status, 200);
    const missing = await download(c, '00000000-0000-4000-8000-000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.reasonCode, 'SourceAsset.NotFound');
  });

  it('PUT file/{id}/upload replaces the bytes with the raw body (version + 1, type kept); If-Match must be the current sha256', async () => {
    const c = await project();
    const f = controlData(await c.post('/api/SourceAsset/file', { path: 'logo.png', contentBase64: Buffer.from('old').toString('base64') }), 201);
    const bytes = randomBytes(2048);
    const up = await sendBytes(c, 'PUT', `/api/SourceAsset/file/${f.id}/upload`, bytes, { 'if-match': `"${f.sha256}"` });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.equal(up.body.surface, 'SourceAsset');
    assert.equal(up.body.state, 'uploaded');
    assert.deepEqual([up.body.data.version, up.body.data.sha256, up.body.data.size, up.body.data.contentType], [2, sha(bytes), 2048, 'image/png']);
    const stale = await sendBytes(c, 'PUT', `/api/SourceAsset/file/${f.id}/upload`, bytes, { 'if-match': `"${f.sha256}"` });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.reasonCode, 'SourceAsset.VersionMismatch');
    const d = await download(c, f.id);
    assert.ok(d.bytes.equals(bytes));
    const text = await sendBytes(c, 'PUT', `/api/SourceAsset/file/${f.id}/upload`, Buffer.from('now text?'), { 'content-type': 'text/plain' });
    assert.equal(text.status, 200);
    assert.equal(text.body.data.content, undefined, 'still image/png: the upload\'s Content-Type does not change the file\'s');
    const missing = await sendBytes(c, 'PUT', '/api/SourceAsset/file/00000000-0000-4000-8000-000000000000/upload', bytes);
    assert.equal(missing.status, 404);
  });

  it('raw bodies past 100 MiB answer 413 by their declared length; other routes keep MAX_BODY_BYTES', async () => {
    const c = await project();
    const f = controlData(await c.post('/api/SourceAsset/file', { path: 'a.bin', contentBase64: '' }), 201);
    for (const [method, path] of [['POST', '/api/SourceAsset/blob'], ['PUT', `/api/SourceAsset/file/${f.id}/upload`]]) {
      const r = await rawRequest(server.url, requestHead(c, method!, path!, ['Content-Type: application/octet-stream', `Content-Length: ${100 * MiB + 1}`]));
      assert.equal(r.status, 413, r.text.slice(0, 300));
      assert.match(r.text, /Request\.BodyTooLarge/);
    }
    // 11 MiB is within an upload's limit but not a JSON route's (MAX_BODY_BYTES, 10 MiB).
    const json = await rawRequest(server.url, requestHead(c, 'POST', '/api/SourceAsset/file', ['Content-Type: application/json', `Content-Length: ${11 * MiB}`]));
    assert.equal(json.status, 413);
    const big = randomBytes(11 * MiB);
    const ok = await sendBytes(c, 'POST', '/api/SourceAsset/blob', big);
    assert.equal(ok.status, 201);
    assert.equal(ok.body.data.size, big.length);
  });

  it('a streamed (chunked) raw body past the limit answers 413 (MAX_UPLOAD_BYTES lowered to 64 KiB here)', async () => {
    const c = await project(lowered);
    const chunks = Array.from({ length: 8 }, () => randomBytes(16 * 1024));
    const r = await rawRequest(lowered.url, requestHead(c, 'POST', '/api/SourceAsset/blob', ['Content-Type: application/octet-stream', 'Transfer-Encoding: chunked']), chunks);
    assert.equal(r.status, 413, r.text.slice(0, 300));
    assert.match(r.text, /Request\.BodyTooLarge/);
    const within = await sendBytes(c, 'POST', '/api/SourceAsset/blob', randomBytes(UPLOAD_LIMIT));
    assert.equal(within.status, 201);
  });

  it('a new branch copies its base\'s source assets (same ids); later changes on either side stay on that side', async () => {
    const c = await project();
    const kept = controlData(await c.post('/api/SourceAsset/file', { path: 'src/a.js', content: 'main v1' }), 201);
    controlData(await c.post('/api/SourceAsset/folder', { path: 'empty' }), 201);
    controlData(await c.post('/api/branches', { name: 'feature' }), 201, 'Branch', 'created');
    const feat = c.with({ branch: 'feature' });
    const copied = controlData(await feat.get(`/api/SourceAsset/file/${kept.id}`), 200);
    assert.deepEqual({ ...copied }, { ...controlData(await c.get(`/api/SourceAsset/file/${kept.id}`), 200) });
    assert.deepEqual(controlData(await feat.get('/api/SourceAsset/scope/shape'), 200), { branch: 'feature', folders: 2, files: 1, bytes: 7 });

    controlData(await feat.put(`/api/SourceAsset/file/${kept.id}/content`, { content: 'feature v2' }), 200);
    controlData(await feat.post('/api/SourceAsset/file', { path: 'src/only-feature.js', content: 'f' }), 201);
    controlData(await c.post('/api/SourceAsset/file', { path: 'src/only-main.js', content: 'm' }), 201);
    assert.equal(controlData(await c.get(`/api/SourceAsset/file/${kept.id}`), 200).content, 'main v1');
    assert.equal(controlData(await feat.get(`/api/SourceAsset/file/${kept.id}`), 200).content, 'feature v2');
    assert.deepEqual(controlData(await c.get('/api/SourceAsset/file'), 200).map((f: any) => f.path), ['src/a.js', 'src/only-main.js']);
    assert.deepEqual(controlData(await feat.get('/api/SourceAsset/file'), 200).map((f: any) => f.path), ['src/a.js', 'src/only-feature.js']);
    expectStatus(await feat.delete(`/api/SourceAsset/file/${kept.id}`), 204);
    assert.equal(controlData(await c.get(`/api/SourceAsset/file/${kept.id}`), 200).path, 'src/a.js');
    const d = await download(feat, controlData(await feat.get('/api/SourceAsset/file/by-path?path=src/only-feature.js'), 200).id);
    assert.equal(d.bytes.toString(), 'f');

    // Deleting the branch takes its assets with it; main's stay.
    expectStatus(await c.delete('/api/branches/feature'), 204);
    controlData(await c.post('/api/branches', { name: 'feature' }), 201);
    assert.deepEqual(controlData(await feat.get('/api/SourceAsset/file'), 200).map((f: any) => f.path), ['src/a.js', 'src/only-main.js']);
    expectError(await c.with({ branch: 'nope' }).get('/api/SourceAsset/tree'), 404, 'NOT_FOUND', (await c.with({ branch: 'nope' }).get('/api/SourceAsset/tree')).body.error.reasonCode);
  });
});
