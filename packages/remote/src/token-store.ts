// The OAuth token file (R11.1, R14): one JSON file holding, per remote server, the tokens and the
// client registered with its authorization server. By default `mcp_http_token.json` in the temp
// directory, or AHMA_HTTP_CLIENT_TOKEN_PATH. The file is the user's secret, so it is only ever
// created with mode 0600 (a fresh temporary renamed over it: a reader sees the old or the new
// file, never half of one), never followed through a symlink, and refused when another user owns
// it or others may read or write it — in a shared temp directory someone else could have made it.
import { randomBytes } from 'node:crypto';
import { constants, promises as fs, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { privateFileProblem } from './private-file.js';

export const TOKEN_FILE_NAME = 'mcp_http_token.json';
export const TOKEN_PATH_VARIABLE = 'AHMA_HTTP_CLIENT_TOKEN_PATH';

/** What is kept for one server. */
export interface ServerCredentials {
  tokens?: OAuthTokens | undefined;
  /** When the tokens were saved (ms since the epoch): the access token's age. */
  savedAt?: number | undefined;
  /** The client registered dynamically with the server's authorization server. */
  client?: OAuthClientInformationMixed | undefined;
}

interface TokenFile {
  readonly version: 1;
  readonly servers: Record<string, ServerCredentials>;
}

/** The token file's path: AHMA_HTTP_CLIENT_TOKEN_PATH, else `mcp_http_token.json` in `dir`. */
export function defaultTokenPath(
  env: Readonly<Record<string, string | undefined>>,
  dir: string = tmpdir(),
): string {
  const configured = env[TOKEN_PATH_VARIABLE];
  return configured !== undefined && configured !== '' ? configured : join(dir, TOKEN_FILE_NAME);
}

/** The key of a server in the file: its URL without query, fragment or credentials. */
export function serverKey(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

export class TokenFileError extends Error {
  override readonly name = 'TokenFileError';
}

export class TokenStore {
  readonly path: string;
  /** Changes of this process, one after another (each reads the file's latest text first). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  /** What is kept for `server`; empty when the file or its entry does not exist. */
  async get(server: URL): Promise<ServerCredentials> {
    return (await this.#read()).servers[serverKey(server)] ?? {};
  }

  /** Changes `server`'s entry (an empty result removes it) and writes the file. */
  update(server: URL, change: (current: ServerCredentials) => ServerCredentials): Promise<void> {
    const next = this.#queue.then(async () => {
      const file = await this.#read();
      const key = serverKey(server);
      const changed = change(file.servers[key] ?? {});
      const empty = Object.values(changed).every((value) => value === undefined);
      const servers = Object.fromEntries(
        Object.entries(file.servers).filter(([name]) => name !== key),
      );
      await this.#write({ version: 1, servers: empty ? servers : { ...servers, [key]: changed } });
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Forgets everything kept for `server`; whether there was anything. */
  async forget(server: URL): Promise<boolean> {
    const existed = Object.keys(await this.get(server)).length > 0;
    if (existed) await this.update(server, () => ({}));
    return existed;
  }

  async #read(): Promise<TokenFile> {
    let handle;
    try {
      // O_NONBLOCK: a FIFO planted at the name must not block the open (it is refused below).
      handle = await fs.open(
        this.path,
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { version: 1, servers: {} };
      if (code === 'ELOOP') {
        throw new TokenFileError(`${this.path} is a symbolic link; the token file must be a file`);
      }
      throw new TokenFileError(`cannot read the token file ${this.path}: ${String(error)}`);
    }
    try {
      const stat = await handle.stat();
      this.#checkOwnership(stat);
      const text = await handle.readFile('utf8');
      const parsed = JSON.parse(text) as Partial<TokenFile>;
      if (typeof parsed.servers !== 'object' || parsed.servers === null)
        throw new Error('no servers');
      return { version: 1, servers: parsed.servers };
    } catch (error) {
      if (error instanceof TokenFileError) throw error;
      // Unreadable as tokens: start over rather than fail every connection (a new login fixes it).
      return { version: 1, servers: {} };
    } finally {
      await handle.close();
    }
  }

  #checkOwnership(stat: Pick<Stats, 'uid' | 'mode' | 'isFile'>): void {
    const problem = privateFileProblem(stat);
    if (problem === undefined) return;
    const hint =
      problem.kind === 'owner'
        ? `: refusing to read or replace it; set ${TOKEN_PATH_VARIABLE} to a path of your own`
        : problem.kind === 'mode'
          ? ': run chmod 600 on it, or delete it and log in again'
          : '';
    throw new TokenFileError(`${this.path} ${problem.text}${hint}`);
  }

  async #write(file: TokenFile): Promise<void> {
    const directory = dirname(this.path);
    await fs.mkdir(directory, { recursive: true, mode: 0o700 });
    const temporary = join(directory, `.${TOKEN_FILE_NAME}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await fs.open(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      // rename replaces a symlink at the name itself, never the file it points to.
      await fs.rename(temporary, this.path);
    } catch (error) {
      await fs.rm(temporary, { force: true });
      throw new TokenFileError(`cannot write the token file ${this.path}: ${String(error)}`);
    }
  }
}
