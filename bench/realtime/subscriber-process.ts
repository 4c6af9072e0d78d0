/**
 * A child process of the fan-out bench holding many WebSocket subscribers.
 *
 * A full client library spends microseconds per message (decode, copy,
 * event emit); at 10k subscribers that, not the server, is what a 2-core
 * box would measure. So each subscriber here is a raw TCP socket with a
 * minimal RFC 6455 client: handshake, one masked `subscribe`, then frame
 * headers are walked and each change frame's `entityId` is read in place
 * (no JSON parse). Arrival time is taken once per TCP chunk.
 *
 * IPC with the parent: `{ type: 'ready', connected }` once every socket has
 * its `subscribed`; on `{ type: 'report', writes }` (entityId → start/ack
 * epoch ms) it answers `{ type: 'result', … }` with latency histograms.
 */
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

const HOST = process.env.RT_HOST!;
const PORT = Number(process.env.RT_PORT);
const PATH = process.env.RT_PATH!;
const COUNT = Number(process.env.RT_COUNT);
const SUBSCRIBE = process.env.RT_SUBSCRIBE!;
const CONNECT_BATCH = 100;
const MARK = Buffer.from('"entityId":"');
const SUBSCRIBED = Buffer.from('"type":"subscribed"');
const UUID_LEN = 36;
/** Histogram: 1 ms buckets up to 60 s. */
const BUCKETS = 60_000;

const epochNow = (): number => performance.timeOrigin + performance.now();

/** Per written row: when this process first saw it, and how many arrivals came how many ms later. */
interface Arrivals {
  first: number;
  offsets: Map<number, number>;
}
const arrivals = new Map<string, Arrivals>();
let frames = 0;
let bytes = 0;
let closedEarly = 0;

function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff]);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i & 3]!;
  return Buffer.concat([head, mask, body]);
}

function record(buf: Buffer, start: number, end: number, now: number): void {
  const at = buf.indexOf(MARK, start);
  if (at < 0 || at + MARK.length + UUID_LEN > end) return;
  const id = buf.toString('latin1', at + MARK.length, at + MARK.length + UUID_LEN);
  let a = arrivals.get(id);
  if (a === undefined) arrivals.set(id, (a = { first: now, offsets: new Map() }));
  const off = Math.round(now - a.first);
  a.offsets.set(off, (a.offsets.get(off) ?? 0) + 1);
}

function subscriber(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: HOST, port: PORT, noDelay: true });
    let handshaken = false;
    let subscribed = false;
    let rest: Buffer | null = null;
    sock.once('error', reject);
    sock.on('close', () => {
      if (subscribed) closedEarly++;
    });
    sock.on('connect', () => {
      sock.write(`GET ${PATH} HTTP/1.1\r\nHost: ${HOST}:${PORT}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    sock.on('data', (chunk: Buffer) => {
      const now = epochNow();
      let buf = rest === null ? chunk : Buffer.concat([rest, chunk]);
      let off = 0;
      if (!handshaken) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          rest = buf;
          return;
        }
        if (!buf.toString('latin1', 0, 12).startsWith('HTTP/1.1 101')) return reject(new Error(`handshake: ${buf.toString('latin1', 0, Math.min(end, 300))}`));
        handshaken = true;
        off = end + 4;
        sock.write(maskedFrame(1, Buffer.from(SUBSCRIBE)));
      }
      if (subscribed) bytes += chunk.length;
      while (buf.length - off >= 2) {
        const b1 = buf[off + 1]! & 0x7f;
        let head = 2;
        let len = b1;
        if (b1 === 126) {
          if (buf.length - off < 4) break;
          len = buf.readUInt16BE(off + 2);
          head = 4;
        } else if (b1 === 127) {
          if (buf.length - off < 10) break;
          len = Number(buf.readBigUInt64BE(off + 2));
          head = 10;
        }
        if (buf.length - off < head + len) break;
        const opcode = buf[off]! & 0x0f;
        const start = off + head;
        const end = start + len;
        if (opcode === 1) {
          if (subscribed) {
            frames++;
            record(buf, start, end, now);
          } else if (buf.indexOf(SUBSCRIBED, start) >= 0 && buf.indexOf(SUBSCRIBED, start) < end) {
            subscribed = true;
            resolve(sock);
          } else return reject(new Error(`subscribe: ${buf.toString('utf8', start, Math.min(end, start + 300))}`));
        } else if (opcode === 9) sock.write(maskedFrame(10, buf.subarray(start, end)));
        off = end;
      }
      rest = off < buf.length ? buf.subarray(off) : null;
    });
  });
}

/** Latency histograms of every delivery, from the write's start and from its acknowledgement. */
function histograms(writes: Array<[string, number, number]>): { fromStart: number[]; fromAck: number[]; delivered: number; unknown: number } {
  const fromStart = new Array<number>(BUCKETS).fill(0);
  const fromAck = new Array<number>(BUCKETS).fill(0);
  const known = new Map(writes.map(([id, s, a]) => [id, [s, a] as const]));
  let delivered = 0;
  let unknown = 0;
  for (const [id, a] of arrivals) {
    const w = known.get(id);
    for (const [off, n] of a.offsets) {
      if (w === undefined) {
        unknown += n;
        continue;
      }
      delivered += n;
      const t = a.first + off;
      fromStart[Math.min(BUCKETS - 1, Math.max(0, Math.round(t - w[0])))]! += n;
      fromAck[Math.min(BUCKETS - 1, Math.max(0, Math.round(t - w[1])))]! += n;
    }
  }
  return { fromStart, fromAck, delivered, unknown };
}

async function main(): Promise<void> {
  const sockets: Socket[] = [];
  for (let i = 0; i < COUNT; i += CONNECT_BATCH) {
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(CONNECT_BATCH, COUNT - i) }, subscriber))));
  }
  process.send!({ type: 'ready', connected: sockets.length });
  process.on('message', (m: { type: string; writes?: Array<[string, number, number]> }) => {
    if (m.type !== 'report') return;
    const h = histograms(m.writes!);
    process.send!({ type: 'result', frames, bytes, closedEarly, ...h }, () => {
      for (const s of sockets) s.destroy();
      process.exit(0);
    });
  });
}

main().catch((err) => {
  process.send!({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
