import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ServiceError, validationFailed } from '../../errors/service-error.js';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['2001:db8::', 32],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** True for loopback, unspecified, link-local, private, unique-local, CGNAT, multicast and reserved addresses (IPv4, IPv6, IPv4-mapped/compatible IPv6). */
export function isPrivateAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v = isIP(a);
  if (v === 4) return BLOCKED.check(a, 'ipv4');
  if (v !== 6) return true;
  // Normalize (URL compresses ::ffff:127.0.0.1 to ::ffff:7f00:1), then judge an embedded IPv4 (mapped or compatible) as IPv4.
  const norm = new URL(`http://[${a}]/`).hostname.slice(1, -1).toLowerCase();
  const embedded = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(norm);
  if (embedded !== null) {
    const hi = parseInt(embedded[1]!, 16);
    const lo = parseInt(embedded[2]!, 16);
    return BLOCKED.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
  }
  return BLOCKED.check(norm, 'ipv6');
}

export const privateTarget = (host: string): ServiceError =>
  validationFailed('Webhook.PrivateTarget', `the webhook target '${host}' resolves to a loopback, link-local or private address; set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow it`, 'url');

/** Parses and checks the URL's shape (http/https, no credentials). */
export function parseTargetUrl(text: string): URL {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw validationFailed('Webhook.InvalidUrl', 'url must be an absolute http or https URL', 'url');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw validationFailed('Webhook.InvalidUrl', 'url must use http or https', 'url');
  if (u.username !== '' || u.password !== '') throw validationFailed('Webhook.InvalidUrl', 'url must not carry credentials', 'url');
  if (text.length > 2048) throw validationFailed('Webhook.InvalidUrl', 'url is too long', 'url');
  return u;
}

/**
 * Refuses a target whose host is, or resolves to, a private address (every
 * resolved address must be public). Runs at create/update and again before
 * each delivery, since DNS can change in between.
 */
export async function checkTarget(url: URL, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host.toLowerCase() === 'localhost' || host.toLowerCase().endsWith('.localhost')) throw privateTarget(host);
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((r) => r.address);
    } catch {
      throw validationFailed('Webhook.UnresolvableTarget', `the webhook target '${host}' does not resolve`, 'url');
    }
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) throw privateTarget(host);
}
