import { parseConfig, InvalidConfig } from './node/config.js';
import { startNode } from './node/start.js';

/** `npm start`: one node, embedded storage unless DATABASE_URL is set. */
async function main(): Promise<void> {
  const config = parseConfig();
  const node = await startNode(config);
  // One write, so a reader sees the whole banner at once.
  let banner = `Plinth listening on ${node.url} (storage: ${node.storage}, node: ${config.nodeId}); gRPC on ${config.host}:${node.grpcPort}\n`;
  if (node.admin.source === 'generated') {
    banner += `Admin token (shown once${node.admin.path === null ? '' : `, stored in ${node.admin.path} with mode 0600`}): ${node.admin.token}\n`;
  } else if (node.admin.source === 'file') {
    banner += `Admin token: stored in ${node.admin.path}\n`;
  }
  process.stdout.write(banner);
  let signalled = false;
  const shutdown = (signal: string): void => {
    if (signalled) return;
    signalled = true;
    node.log.info('shutting down', { signal });
    node.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        node.log.error('shutdown failed', { error: err instanceof Error ? err.message : String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  const msg = err instanceof InvalidConfig ? `invalid configuration: ${err.message}` : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`plinth: ${msg}\n`);
  process.exit(1);
});
