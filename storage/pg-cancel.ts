import pg from 'pg';

interface WireConnection {
  on(event: string, f: () => void): void;
  connect(portOrPath: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
}
interface ClientInternals {
  host: string;
  port: number;
  connection: WireConnection;
  processID: number | null;
  secretKey: number | null;
  _activeQuery: unknown;
}

/**
 * Sends PostgreSQL's cancel request for the statement `client` is running:
 * a short separate connection carrying the backend's key (no pool slot, no
 * authentication), as pg's own Client#cancel does, minus its deprecated
 * `activeQuery` read. Nothing running: nothing sent. Failures are ignored:
 * the statement then ends on its own or with its connection.
 */
export function cancelRunningStatement(connectionString: string, client: pg.PoolClient): void {
  const target = client as unknown as ClientInternals;
  if (target._activeQuery === null || target._activeQuery === undefined || target.processID === null || target.secretKey === null) return;
  const { processID, secretKey } = target;
  const carrier = new pg.Client({ connectionString }) as unknown as ClientInternals;
  const con = carrier.connection;
  con.on('error', () => {});
  con.on('connect', () => con.cancel(processID, secretKey));
  if (carrier.host.startsWith('/')) con.connect(`${carrier.host}/.s.PGSQL.${carrier.port}`);
  else con.connect(carrier.port, carrier.host);
}
