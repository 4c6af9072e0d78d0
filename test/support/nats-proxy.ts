import { connect, createServer, type Server, type Socket } from 'node:net';

const CRLF = Buffer.from('\r\n');

/**
 * A TCP proxy between one Plinth node and its NATS server, for fault tests:
 * it can drop the next message(s) the server delivers on a subject (a notice
 * lost on the way, as core NATS may lose one) and pause all traffic both
 * ways (a node cut off from the bus while its TCP connection stays open).
 * It reads the server's protocol stream frame by frame (MSG and HMSG carry a
 * byte count; every other operation is one line) and forwards the client's as is.
 */
export class NatsProxy {
  private readonly drops = new Map<string, number>();
  private readonly held: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();
  private paused = false;
  /** Messages dropped so far, per subject. */
  readonly dropped = new Map<string, number>();

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(target: string): Promise<NatsProxy> {
    const { hostname, port } = new URL(target);
    let proxy: NatsProxy | null = null;
    const server = createServer((client) => proxy!.accept(client, hostname, Number(port)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port: own } = server.address() as { port: number };
    proxy = new NatsProxy(server, `nats://127.0.0.1:${own}`);
    return proxy;
  }

  /** Drops the next `count` messages the server delivers on `subject`. */
  dropNext(subject: string, count = 1): void {
    this.drops.set(subject, (this.drops.get(subject) ?? 0) + count);
  }

  /** Holds every byte in both directions until `resume`. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    for (const send of this.held.splice(0)) send();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    this.sockets.add(client).add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk) => this.forward(() => upstream.write(chunk)));
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const frame = this.nextFrame(pending);
        if (frame === null) break;
        const bytes = Buffer.from(pending.subarray(0, frame.length));
        pending = pending.subarray(frame.length);
        if (!this.drop(frame.subject)) this.forward(() => client.write(bytes));
      }
    });
  }

  private forward(send: () => void): void {
    if (this.paused) this.held.push(send);
    else send();
  }

  private drop(subject: string | null): boolean {
    if (subject === null) return false;
    const left = this.drops.get(subject) ?? 0;
    if (left <= 0) return false;
    this.drops.set(subject, left - 1);
    this.dropped.set(subject, (this.dropped.get(subject) ?? 0) + 1);
    return true;
  }

  /** The length of the first complete frame in `buf` (and its subject when it is a message), or null when incomplete. */
  private nextFrame(buf: Buffer): { length: number; subject: string | null } | null {
    const eol = buf.indexOf(CRLF);
    if (eol < 0) return null;
    const line = buf.subarray(0, eol).toString('latin1');
    if (!line.startsWith('MSG ') && !line.startsWith('HMSG ')) return { length: eol + 2, subject: null };
    const parts = line.split(' ').filter((p) => p !== '');
    const size = Number(parts[parts.length - 1]);
    const length = eol + 2 + size + 2;
    return buf.length < length ? null : { length, subject: parts[1]! };
  }
}
