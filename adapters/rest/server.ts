import uWS from 'uWebSockets.js';
import type { Services } from '../../runtime/services.js';
import { restHandler, type InFlight, type RestOptions } from './handler.js';
import { registerRealtimeWebSocket } from '../realtime/websocket.js';
import { registerGraphQLWebSocket } from '../graphql/websocket.js';
import { registerMcpEndpoint } from '../mcp/endpoint.js';
import { SlowConsumerSweep } from '../realtime/slow-consumer-sweep.js';
import { DEFAULT_MAX_BUFFERED_BYTES } from '../realtime/connection.js';

/** Without it a second node on the same port would silently share it. */
const EXCLUSIVE_PORT = 1;

export interface HttpServer {
  port: number;
  inFlight: InFlight;
  /** Stops accepting new connections. */
  stopListening(): void;
  /** Closes every connection. */
  close(): void;
}

/** Starts the uWS app for REST (and, later, WebSocket/SSE) on host:port. Port 0 picks a free one. */
export function startHttpServer(services: Services, host: string, port: number, opts: RestOptions, inFlight: InFlight = { count: 0 }): Promise<HttpServer> {
  // The fork ships native binaries for Node 16/18/20 only; elsewhere it silently falls back to a slow shim.
  if (typeof (uWS as unknown as { SSLApp?: unknown }).SSLApp !== 'function') throw new Error('uWebSockets.js native binary not available for this Node.js version');
  const app = uWS.App();
  // WebSocket routes before the catch-all.
  const sweep = new SlowConsumerSweep();
  if (services.realtime !== undefined) {
    const ws = { maxBufferedBytes: opts.realtimeMaxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES, sweep };
    registerRealtimeWebSocket(app, services, '/api/realtime', '/api', ws);
    registerRealtimeWebSocket(app, services, '/v1/realtime', '/v1', ws);
    // GraphQL subscriptions share the path of `POST /graphql`: uWS hands a GET without an upgrade on to the REST handler.
    const gql = { maxBufferedBytes: ws.maxBufferedBytes, maxMessageBytes: opts.maxBodyBytes };
    registerGraphQLWebSocket(app, services, '/graphql', '/api', gql);
    registerGraphQLWebSocket(app, services, '/api/graphql', '/api', gql);
    registerGraphQLWebSocket(app, services, '/v1/graphql', '/v1', gql);
  }
  // MCP's Streamable HTTP endpoint and its protected-resource metadata (adapters/mcp/).
  registerMcpEndpoint(app, services, opts, inFlight);
  app.any('/*', restHandler(services, opts, inFlight));
  // The typings lack the (host, port, options, cb) overload and app.close(); the binary has both.
  const raw = app as unknown as {
    listen(host: string, port: number, options: number, cb: (s: uWS.us_listen_socket | false) => void): void;
    close(): void;
  };
  return new Promise((resolve, reject) => {
    raw.listen(host, port, EXCLUSIVE_PORT, (listenSocket) => {
      if (listenSocket === false) return reject(new Error(`cannot listen on ${host}:${port}`));
      let open = true;
      resolve({
        port: uWS.us_socket_local_port(listenSocket),
        inFlight,
        stopListening: () => {
          if (open) uWS.us_listen_socket_close(listenSocket);
          open = false;
        },
        close: () => {
          sweep.stop();
          raw.close();
        },
      });
    });
  });
}
