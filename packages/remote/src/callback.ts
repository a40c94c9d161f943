// The OAuth redirect URI (R14.5): an HTTP server on localhost taking the callbacks of logins in
// progress — `code` and `state` — and answering the browser. Several logins (one per remote server)
// may wait at once on the one port; each is found by its `state`. Checking `state` is ours (the SDK
// never sees the callback): a callback with a state nobody waits for is refused and changes
// nothing, so a stray or forged request can neither end a login nor inject a code. The server
// listens only while a login waits.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DEFAULT_CALLBACK_PORT = 8080;
export const CALLBACK_PATH = '/callback';

export class AuthorizationFailed extends Error {
  override readonly name = 'AuthorizationFailed';
}

interface Waiter {
  readonly resolve: (code: string) => void;
  readonly reject: (error: Error) => void;
}

export class CallbackListener {
  readonly port: number;
  readonly #waiting = new Map<string, Waiter>();
  #server: Promise<Server> | undefined;

  /** On 127.0.0.1:`port` (0 = any free port, for tests that learn it from `listen`). */
  constructor(port: number) {
    this.port = port;
  }

  /** Listens (if not yet); resolves with the port, or rejects saying why it cannot. */
  async listen(): Promise<number> {
    this.#server ??= this.#start();
    try {
      return ((await this.#server).address() as AddressInfo).port;
    } catch (error) {
      this.#server = undefined;
      throw error;
    }
  }

  /** The code of the callback carrying `state`; rejects on an error callback or the timeout. */
  async code(state: string, timeoutMs: number): Promise<string> {
    await this.listen();
    try {
      return await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(
            new AuthorizationFailed(
              `no login came back within ${String(Math.round(timeoutMs / 1000))} s`,
            ),
          );
        }, timeoutMs);
        timer.unref(); // a login waiting for the user keeps no process alive
        const settle =
          <T>(done: (value: T) => void) =>
          (value: T) => {
            clearTimeout(timer);
            done(value);
          };
        this.#waiting.set(state, { resolve: settle(resolve), reject: settle(reject) });
      });
    } finally {
      this.#waiting.delete(state);
      if (this.#waiting.size === 0) await this.#stop();
    }
  }

  /** Stops listening; logins still waiting fail at once. */
  async close(): Promise<void> {
    for (const waiter of this.#waiting.values()) {
      waiter.reject(
        new AuthorizationFailed('the login was abandoned: its callback server stopped'),
      );
    }
    this.#waiting.clear();
    await this.#stop();
  }

  async #stop(): Promise<void> {
    const starting = this.#server;
    this.#server = undefined;
    const server = await starting?.catch(() => undefined);
    if (server === undefined) return;
    await new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  }

  #start(): Promise<Server> {
    const server = createServer((req, res) => {
      const page = (status: number, text: string) => {
        res.writeHead(status, {
          'content-type': 'text/plain; charset=utf-8',
          'cache-control': 'no-store',
        });
        res.end(`${text}\n`);
      };
      // Anyone on this machine can connect: a request-target no URL can be made of is a 400,
      // never an exception in the process that waits for the login.
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://127.0.0.1');
      } catch {
        return page(400, 'Bad request');
      }
      if (url.pathname !== CALLBACK_PATH) return page(404, 'Not found');
      const state = url.searchParams.get('state');
      const waiter = state === null ? undefined : this.#waiting.get(state);
      if (state === null || waiter === undefined) {
        return page(400, 'This authorization response was not expected here (unknown state).');
      }
      this.#waiting.delete(state);
      const error = url.searchParams.get('error');
      const code = url.searchParams.get('code');
      if (error !== null || code === null) {
        const detail = url.searchParams.get('error_description');
        const reason = `${error ?? 'no code'}${detail === null ? '' : `: ${detail}`}`;
        page(400, `Authorization failed (${reason}). You can close this window.`);
        waiter.reject(new AuthorizationFailed(`the authorization server refused: ${reason}`));
        return;
      }
      page(200, 'Ahma is authorized. You can close this window.');
      waiter.resolve(code);
    });
    return new Promise<Server>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        reject(
          new AuthorizationFailed(
            error.code === 'EADDRINUSE'
              ? `port ${String(this.port)} for the OAuth callback is in use: free it, or choose another callback port`
              : `cannot listen for the OAuth callback on port ${String(this.port)}: ${String(error)}`,
          ),
        );
      });
      server.listen(this.port, '127.0.0.1', () => resolve(server));
    });
  }
}
