/**
 * Guest-side code evaluated first in every sandbox: builds `ctx` from plain
 * data and one native function, `host(target, argsJson) → Promise<answerJson>`,
 * which it keeps in a closure (the handler never sees it). It also hands the
 * worker `run(fn)`, whose promise always fulfils with the outcome (the handler's
 * result serialized, or its failure described), so the worker reads one settled
 * value instead of walking guest objects.
 *
 * Canonical errors (ctx.error, host refusals) are remembered in a WeakMap
 * private to this closure, with their fields copied at creation: a handler can
 * neither forge one nor change the code of one it caught.
 */
import { MAX_RESULT_BYTES } from '../types.js';

/** Statuses of the codes `ctx.error` accepts (CONTRACT "Handlers"). */
const CTX_ERROR_STATUS = { VALIDATION_FAILED: 422, NOT_FOUND: 404, CONFLICT: 409, ACCESS_DENIED: 403 };

/** Longest stack text kept for the audit row (a deep recursion's stack is megabytes). */
export const MAX_STACK_CHARS = 4_096;

export const PRELUDE = `(function (host, dataJson, inputJson) {
  'use strict';
  const STATUS = ${JSON.stringify(CTX_ERROR_STATUS)};
  const canonical = new WeakMap();
  const refusal = (e) => {
    const fields = { code: String(e.code), reasonCode: String(e.reasonCode), message: String(e.message), status: Number(e.status) };
    if (e.field !== undefined && e.field !== null) fields.field = String(e.field);
    const err = new Error(fields.message);
    err.name = 'PlinthError';
    Object.assign(err, fields);
    canonical.set(err, fields);
    return err;
  };
  const call = (target, args) => {
    let json;
    try { json = JSON.stringify(args); } catch (e) { return Promise.reject(e); }
    return host(target, json).then((answerJson) => {
      const a = JSON.parse(answerJson);
      if (a.ok) return a.value;
      throw refusal(a.error);
    });
  };
  const methods = (prefix, names) => {
    const o = {};
    for (const n of names) o[n] = (...args) => call(prefix + n, args);
    return Object.freeze(o);
  };
  const DB_METHODS = ['list', 'get', 'count', 'create', 'update', 'delete'];
  const db = new Proxy({}, {
    get: (_, plural) => typeof plural === 'string' ? methods('db.' + plural + '.', DB_METHODS) : undefined,
  });
  const log = Object.freeze({
    info: (msg, fields) => call('log.info', fields === undefined ? [String(msg)] : [String(msg), fields]),
    warn: (msg, fields) => call('log.warn', fields === undefined ? [String(msg)] : [String(msg), fields]),
    error: (msg, fields) => call('log.error', fields === undefined ? [String(msg)] : [String(msg), fields]),
  });
  const response = (r) => {
    const headers = Object.assign({}, r.headers);
    const lower = {};
    for (const k of Object.keys(headers)) lower[k.toLowerCase()] = headers[k];
    Object.defineProperty(headers, 'get', { value: (name) => { const v = lower[String(name).toLowerCase()]; return v === undefined ? null : v; } });
    const body = typeof r.body === 'string' ? r.body : '';
    return Object.freeze({
      status: r.status, ok: r.status >= 200 && r.status < 300, headers,
      text: () => Promise.resolve(body),
      json: () => new Promise((resolve) => resolve(JSON.parse(body))),
    });
  };
  const fetch = (url, init) => call('fetch', init === undefined ? [String(url)] : [String(url), init]).then(response);
  const error = (code, reasonCode, message, field) => {
    if (!Object.prototype.hasOwnProperty.call(STATUS, code)) {
      throw new TypeError('ctx.error: code must be one of ' + Object.keys(STATUS).join(', '));
    }
    throw refusal({ code, reasonCode, message, status: STATUS[code], field });
  };
  const data = JSON.parse(dataJson);
  const ctx = Object.assign({}, data.extra, {
    actor: data.actor, correlationId: data.correlationId, publicationVersion: data.publicationVersion,
    db, log, fetch, error,
  });
  if (data.id !== undefined) ctx.id = data.id;
  if (data.surface === 'ManagementHandler') {
    ctx.platform = new Proxy({}, {
      get: (_, area) => typeof area === 'string'
        ? new Proxy({}, { get: (__, m) => typeof m === 'string' ? (...args) => call('platform.' + area + '.' + m, args) : undefined })
        : undefined,
    });
  }
  const input = JSON.parse(inputJson);
  const describe = (e) => {
    const c = e !== null && typeof e === 'object' ? canonical.get(e) : undefined;
    if (c !== undefined) return { t: 'canonical', error: c };
    try {
      if (e instanceof Error) {
        return { t: 'threw', name: String(e.name), message: String(e.message), stack: String(e.stack).slice(0, ${MAX_STACK_CHARS}) };
      }
      return { t: 'threw', message: String(e) };
    } catch (_) {
      return { t: 'threw', message: 'a value that cannot be shown' };
    }
  };
  const finish = (v) => {
    if (v === undefined) return { t: 'ok', json: 'null' };
    let json;
    try { json = JSON.stringify(v); } catch (e) { return { t: 'resultInvalid', message: 'the return value is not JSON: ' + String(e && e.message) }; }
    if (json === undefined) return { t: 'resultInvalid', message: 'the return value is not JSON' };
    // UTF-16 units never outnumber UTF-8 bytes: a longer string is surely too big (the worker checks the bytes).
    if (json.length > ${MAX_RESULT_BYTES}) return { t: 'resultInvalid', message: 'the return value is larger than ${MAX_RESULT_BYTES} bytes' };
    return { t: 'ok', json };
  };
  return (fn) => new Promise((resolve) => resolve(fn(ctx, input))).then(finish, describe);
})`;
