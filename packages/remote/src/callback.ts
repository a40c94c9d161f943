// The OAuth redirect URI (R14.5): an HTTP server on localhost that takes the one callback of an
// authorization — `code` and `state` — and answers the browser. Checking `state` is ours (the SDK
// never sees the callback): a callback with another state is refused and the wait goes on, so a
// stray or forged request cannot end a login.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DEFAULT_CALLBACK_PORT = 8080;
export const CALLBACK_PATH = '/callback';

export class AuthorizationFailed extends Error {
  override readonly name = 'AuthorizationFailed';
}

export interface CallbackServer {
  readonly port: number;
  /** Resolves with the code of the callback carrying `state`; rejects on an error callback. */
  code(state: string, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` (0 = any free port). */
export async function startCallbackServer(port: number): Promise<CallbackServer> {
  let waiting:
    { state: string; resolve: (code: string) => void; reject: (error: Error) => void } | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const page = (status: number, text: string) => {
      res.writeHead(status, {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(`${text}\n`);
    };
    if (url.pathname !== CALLBACK_PATH) return page(404, 'Not found');
    const state = url.searchParams.get('state');
    if (waiting === undefined || state !== waiting.state) {
      return page(400, 'This authorization response was not expected here (unknown state).');
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    const current = waiting;
    waiting = undefined;
    if (error !== null || code === null) {
      const detail = url.searchParams.get('error_description');
      const reason = `${error ?? 'no code'}${detail === null ? '' : `: ${detail}`}`;
      page(400, `Authorization failed (${reason}). You can close this window.`);
      current.reject(new AuthorizationFailed(`the authorization server refused: ${reason}`));
      return;
    }
    page(200, 'Ahma is authorized. You can close this window.');
    current.resolve(code);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AuthorizationFailed(
      code === 'EADDRINUSE'
        ? `port ${String(port)} for the OAuth callback is in use: free it, or choose another port (--callback-port)`
        : `cannot listen for the OAuth callback on port ${String(port)}: ${String(error)}`,
    );
  });
  return {
    port: (server.address() as AddressInfo).port,
    code: (state, timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting = undefined;
          reject(
            new AuthorizationFailed(
              `no authorization arrived within ${String(Math.round(timeoutMs / 1000))} s`,
            ),
          );
        }, timeoutMs);
        const settle =
          <T>(done: (value: T) => void) =>
          (value: T) => {
            clearTimeout(timer);
            done(value);
          };
        waiting = { state, resolve: settle(resolve), reject: settle(reject) };
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
