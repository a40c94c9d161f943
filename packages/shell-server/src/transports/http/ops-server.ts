// --ops-page: a stdio server's operations page (ops/page.ts) on a loopback port of its own. Only
// /ops is served, behind the same Host and Origin guard as the MCP endpoint (guard.ts): no MCP
// here, so no bearer token either — the page's one-time link and cookie are its authentication.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { OpsPage } from '../../ops/page.js';
import type { Runtime } from '../../runtime/runtime.js';
import { checkRequest } from './guard.js';
import { listen } from './server.js';

/** Loopback only: the page shows what commands print. */
const HOST = '127.0.0.1';

export interface OpsPageServer {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly page: OpsPage;
  close(): Promise<void>;
}

export async function startOpsPageServer(
  runtime: Runtime,
  options: {
    readonly port: number;
    readonly logger: Logger;
    readonly onLink?: (link: string) => void;
  },
): Promise<OpsPageServer> {
  let origin = '';
  const page = new OpsPage(runtime, {
    onLink: () => {
      if (origin !== '') options.onLink?.(page.link(origin));
    },
  });
  let port = options.port;
  const server = createServer((req, res) => {
    const refused = checkRequest(req.headers, { bindHost: HOST, port, token: undefined });
    const url = new URL(req.url ?? '/', `http://${HOST}:${String(port)}`);
    if (refused !== undefined || !OpsPage.owns(url.pathname)) {
      res.writeHead(refused?.status ?? 404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`${refused?.message ?? 'Not found: the operations page is /ops'}\n`);
      return;
    }
    page.handle(req, res, url).catch((error: unknown) => {
      options.logger.error({ err: error, path: url.pathname }, 'operations page request failed');
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  await listen(server, HOST, options.port);
  port = (server.address() as AddressInfo).port;
  origin = `http://${HOST}:${String(port)}`;
  options.onLink?.(page.link(origin));
  return {
    origin,
    page,
    close: async () => {
      page.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
