import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { notFound } from '../../errors/service-error.js';
import { noGrants, type DeclaredSpec, type OperationContext, type Result } from '../types.js';
import type { OperationContract } from '../contract/index.js';
import { GRAPHQL_TAG } from './graphql-schemas.js';

/**
 * The playground's files, served from their npm packages (the machines
 * that run Plinth may have no internet, so no CDN): GraphiQL's UMD build,
 * the React 18 UMD builds it runs on, and graphql-ws's client for
 * subscriptions.
 */
const ASSETS: Record<string, { pkg: string; file: string; type: string }> = {
  'graphiql.min.js': { pkg: 'graphiql', file: 'graphiql.min.js', type: 'text/javascript; charset=utf-8' },
  'graphiql.min.css': { pkg: 'graphiql', file: 'graphiql.min.css', type: 'text/css; charset=utf-8' },
  'react.production.min.js': { pkg: 'react', file: 'umd/react.production.min.js', type: 'text/javascript; charset=utf-8' },
  'react-dom.production.min.js': { pkg: 'react-dom', file: 'umd/react-dom.production.min.js', type: 'text/javascript; charset=utf-8' },
  'graphql-ws.js': { pkg: 'graphql-ws', file: 'umd/graphql-ws.js', type: 'text/javascript; charset=utf-8' },
};

const require = createRequire(import.meta.url);

/** A package's directory, found the way Node finds packages (their `exports` do not list these files). */
function packageDir(pkg: string): string {
  for (const dir of require.resolve.paths(pkg) ?? []) if (existsSync(join(dir, pkg, 'package.json'))) return join(dir, pkg);
  throw new Error(`package ${pkg} is not installed`);
}

/** Files read once, on first use. */
const loaded = new Map<string, string>();

const CACHE = 'public, max-age=86400';
// Inline script and styles are the page's own; data goes to this origin only (HTTP and WebSocket).
const CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self' ws: wss:";

/**
 * The page. GraphiQL sends the headers of its Headers tab with each
 * request; subscriptions send the same headers (names lower-cased) as the
 * graphql-ws `connection_init` payload.
 */
function page(base: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Plinth GraphQL</title>
<style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
<link rel="stylesheet" href="${base}/assets/graphiql.min.css">
<script src="${base}/assets/react.production.min.js"></script>
<script src="${base}/assets/react-dom.production.min.js"></script>
<script src="${base}/assets/graphql-ws.js"></script>
<script src="${base}/assets/graphiql.min.js"></script>
</head>
<body>
<div id="graphiql">Loading…</div>
<script>
  const url = new URL('${base}', location.href);
  const headers = () => {
    try {
      const raw = JSON.parse(localStorage.getItem('graphiql:headers') || '{}');
      return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k.toLowerCase(), String(v)]));
    } catch { return {}; }
  };
  const wsUrl = url.href.replace(/^http/, 'ws');
  const fetcher = GraphiQL.createFetcher({ url: url.href, wsClient: graphqlWs.createClient({ url: wsUrl, lazy: true, connectionParams: headers }) });
  const defaultHeaders = JSON.stringify({ Authorization: 'Bearer <token>', 'X-Service-Tenant': '<tenant>', 'X-Service-Project': '<project>' }, null, 2);
  ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, { fetcher, defaultHeaders, shouldPersistHeaders: true }));
</script>
</body>
</html>
`;
}

/** Development only (CONTRACT: GraphQL): in production the routes do not exist. */
function available(): void {
  if (process.env.NODE_ENV === 'production') throw notFound('Route.Unknown', 'no route matches this path');
}

/** Development only: `NODE_ENV=production` answers 404 `Route.Unknown`, so the page may change with any release. */
const playground = (path: string, summary: string, mediaType: string): OperationContract => ({
  tag: GRAPHQL_TAG, summary, routes: [{ method: 'GET', path }], output: { status: 200, mediaType }, errors: [404],
  metering: { unit: 'none', why: 'static development files, no project data' }, stability: 'experimental',
});

/** `/graphql` or `/api/graphql`, `/v1/graphql`: where the page was asked for, so its requests go to the same place. */
const baseOf = (ctx: OperationContext): string => (ctx.inv.basePath === '/api' ? '/graphql' : `${ctx.inv.basePath}/graphql`);

export const GRAPHQL_PLAYGROUND_SPECS = {
  /** `GET /graphql`: GraphiQL, public and without data (it asks for everything with the credential the user types in). */
  page: {
    id: 'Discovery.GraphQL.Playground', authn: 'public', scope: 'none', grants: noGrants,
    contract: playground('graphql', 'GraphiQL, the GraphQL playground page (development only; public, holds no data)', 'text/html'),
    execute: async (ctx): Promise<Result> => {
      available();
      return { status: 200, body: page(baseOf(ctx)), headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache' } };
    },
  } satisfies DeclaredSpec,
  /** `GET /graphql/assets/:file`: one of the page's files. */
  asset: {
    id: 'Discovery.GraphQL.PlaygroundAsset', authn: 'public', scope: 'none', grants: noGrants,
    contract: {
      ...playground('graphql/assets/:file', 'A script or style sheet of the playground page, from its npm package (development only)', 'text/*'),
      params: { file: { description: 'File name (`graphiql.min.js`, `graphiql.min.css`, `react.production.min.js`, `react-dom.production.min.js`, `graphql-ws.js`); another answers 404.' } },
    },
    execute: async (ctx): Promise<Result> => {
      available();
      const name = ctx.inv.params.file ?? '';
      const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name]! : undefined;
      if (asset === undefined) throw notFound('Route.Unknown', 'no such playground file');
      let text = loaded.get(name);
      if (text === undefined) loaded.set(name, (text = readFileSync(join(packageDir(asset.pkg), asset.file), 'utf8')));
      return { status: 200, body: text, headers: { 'Content-Type': asset.type, 'Cache-Control': CACHE } };
    },
  } satisfies DeclaredSpec,
};
