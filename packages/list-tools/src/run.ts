// ahma-list-tools [--format text|json] [--timeout SECONDS] (-- CMD ARGS… | --http URL): connects to
// any MCP server (logging in with OAuth when an HTTP server asks) and prints its tools and their
// parameters; --logout URL forgets a server's tokens. Exit 0 listed, 1 the server could not be
// started, reached or listed, 2 usage error.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CALLBACK_PORT, TokenStore, defaultTokenPath, openBrowser } from '@ahma/remote';
import packageJson from '../package.json' with { type: 'json' };
import { listServerTools, type HttpAuth, type ListTarget } from './connect.js';
import { ListToolsError } from './errors.js';
import { renderJson, renderText } from './render.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Where the command writes; injected so tests can capture it. */
export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What the command would take from its process; injected so tests can run it in-process. */
export interface RunOptions extends Output {
  /** A stdio server starts in it; --token-file is read from it (default: the process's). */
  readonly cwd?: string | undefined;
  /**
   * A stdio server inherits it; the token file's path and the client secret are read from it
   * (default: the process's).
   */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

const DEFAULT_TIMEOUT_SECONDS = 30;
/** How long a login waits for the user to authorize in the browser. */
const AUTHORIZATION_TIMEOUT_MS = 5 * 60_000;
const CLIENT_SECRET_VARIABLE = 'AHMA_OAUTH_CLIENT_SECRET';
// setTimeout's limit (2^31 - 1 ms); a longer delay would fire at once.
const MAX_TIMEOUT_SECONDS = 2_147_483;

const USAGE = `Usage: ahma-list-tools [--format text|json] [--timeout SECONDS] (-- CMD ARGS… | --http URL)
       ahma-list-tools --logout URL

Connects to an MCP server, lists all its tools and prints each with its parameters.

Server (exactly one):
  -- CMD ARGS…        start CMD as a stdio MCP server (it inherits the environment and working
                      directory; its stderr is shown only if it fails)
  --http URL          connect to a Streamable HTTP MCP endpoint, e.g. http://127.0.0.1:3001/mcp
                      A server that asks for OAuth is logged in to: the browser opens (or the URL
                      is printed) and the login comes back to http://127.0.0.1:PORT/callback.
  --token-file FILE   send "Authorization: Bearer <FILE's content>" instead (no OAuth): the token
                      of an \`ahma-shell --mode http\`, whose file it prints at start

OAuth (--http):
  --callback-port PORT  the localhost port of the login's callback (default: ${DEFAULT_CALLBACK_PORT})
  --client-id ID      a client registered with the server's authorization server (its secret, if
                      any, from ${CLIENT_SECRET_VARIABLE}); default: registered dynamically
  --no-browser        only print the login URL
  --logout URL        forget the tokens and client kept for URL, and exit
  Tokens are kept in $TMPDIR/mcp_http_token.json (mode 0600), or at AHMA_HTTP_CLIENT_TOKEN_PATH.

Options:
  --format text|json  output format (default: text)
  --timeout SECONDS   limit for connecting and listing (each request, when logging in) (default: ${DEFAULT_TIMEOUT_SECONDS})
  -h, --help          show this help
  -v, --version       show the version

Exit status: 0 listed, 1 the server could not be started, reached or listed, 2 usage error.
`;

export async function runListTools(argv: readonly string[], options: RunOptions): Promise<number> {
  const output: Output = options;
  const { cwd } = options;
  const env = options.env ?? process.env;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        format: { type: 'string', default: 'text' },
        timeout: { type: 'string', default: String(DEFAULT_TIMEOUT_SECONDS) },
        http: { type: 'string' },
        'token-file': { type: 'string' },
        'callback-port': { type: 'string', default: String(DEFAULT_CALLBACK_PORT) },
        'client-id': { type: 'string' },
        'no-browser': { type: 'boolean' },
        logout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    return usageError(output, error instanceof Error ? error.message : String(error));
  }
  const { values, positionals, tokens } = parsed;
  if (values.help === true) {
    output.stdout(USAGE);
    return EXIT_OK;
  }
  if (values.version === true) {
    output.stdout(`${packageJson.version}\n`);
    return EXIT_OK;
  }

  const format = values.format;
  if (format !== 'text' && format !== 'json') {
    return usageError(output, `--format must be "text" or "json", not "${format}"`);
  }
  const seconds = Number(values.timeout);
  if (values.timeout.trim() === '' || !(seconds > 0 && seconds <= MAX_TIMEOUT_SECONDS)) {
    return usageError(
      output,
      `--timeout must be a positive number of seconds up to ${MAX_TIMEOUT_SECONDS}, not "${values.timeout}"`,
    );
  }

  const terminator = tokens.find((token) => token.kind === 'option-terminator');
  const stray = tokens.find(
    (token) =>
      token.kind === 'positional' && (terminator === undefined || token.index < terminator.index),
  );
  if (stray?.kind === 'positional') {
    return usageError(
      output,
      `unexpected argument "${stray.value}" (put the server command after --: ahma-list-tools -- ${stray.value} …)`,
    );
  }

  const store = new TokenStore(defaultTokenPath(env));
  if (values.logout !== undefined) {
    const url = httpUrl('--logout', values.logout);
    if (typeof url === 'string') return usageError(output, url);
    try {
      const forgot = await store.forget(url);
      output.stdout(
        forgot
          ? `Forgot the tokens of ${url.href} (in ${store.path}).\n`
          : `No tokens were kept for ${url.href} (in ${store.path}).\n`,
      );
      return EXIT_OK;
    } catch (error) {
      output.stderr(`ahma-list-tools: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT_FAILED;
    }
  }
  const port = Number(values['callback-port']);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return usageError(
      output,
      `--callback-port must be a port number, not "${values['callback-port']}"`,
    );
  }
  const secret = env[CLIENT_SECRET_VARIABLE];
  const auth: HttpAuth = {
    store,
    callbackPort: port,
    clientId: values['client-id'],
    clientSecret: secret === '' ? undefined : secret,
    authorizationTimeoutMs: AUTHORIZATION_TIMEOUT_MS,
    onAuthorizationUrl: async (url) => {
      const opened = values['no-browser'] !== true && (await openBrowser(url.href));
      output.stderr(
        `ahma-list-tools: the server asks you to log in. ${opened ? 'Your browser was opened at' : 'Open'} this URL${opened ? '; if it did not show, open it yourself' : ''}:\n  ${url.href}\n` +
          `Waiting for the login to come back to http://127.0.0.1:${String(port)}/callback …\n`,
      );
    },
  };

  const target = parseTarget(values.http, terminator === undefined ? undefined : positionals, auth);
  if (typeof target === 'string') return usageError(output, target);
  if (values['token-file'] !== undefined) {
    if (target.kind !== 'http') return usageError(output, '--token-file needs --http URL');
    const bearer = await readBearer(values['token-file'], cwd);
    if ('error' in bearer) {
      output.stderr(`ahma-list-tools: ${bearer.error}\n`);
      return EXIT_FAILED;
    }
    target.bearer = bearer.token;
  }

  try {
    const listing = await listServerTools(target, { timeoutMs: seconds * 1000, cwd, env });
    output.stdout(format === 'json' ? renderJson(listing) : renderText(listing));
    return EXIT_OK;
  } catch (error) {
    if (!(error instanceof ListToolsError)) throw error;
    output.stderr(`ahma-list-tools: ${error.message}\n`);
    return EXIT_FAILED;
  }
}

/** The token a file holds (surrounding whitespace dropped), or why it cannot be one. */
async function readBearer(
  file: string,
  cwd: string | undefined,
): Promise<{ token: string } | { error: string }> {
  let text: string;
  try {
    text = (await readFile(cwd === undefined ? file : resolve(cwd, file), 'utf8')).trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { error: `--token-file ${file}: cannot read it (${code})` };
  }
  return /^[\x21-\x7e]+$/.test(text)
    ? { token: text }
    : { error: `--token-file ${file}: not a token (one word of visible ASCII characters)` };
}

/** The one server named on the command line, or why the arguments do not name exactly one. */
function parseTarget(
  http: string | undefined,
  command: readonly string[] | undefined,
  auth: HttpAuth,
): ListTarget | string {
  if (http !== undefined && command !== undefined) {
    return 'give either --http URL or -- CMD ARGS…, not both';
  }
  if (command !== undefined) {
    const [name, ...args] = command;
    if (name === undefined || name === '') return 'no command after --';
    return { kind: 'stdio', command: name, args };
  }
  if (http === undefined) return 'no server: give -- CMD ARGS… or --http URL';
  const url = httpUrl('--http', http);
  return typeof url === 'string' ? url : { kind: 'http', url, auth };
}

/** An absolute http(s) URL given to `option`, or why it is not one. */
function httpUrl(option: string, text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${option} needs an absolute URL such as http://127.0.0.1:3001/mcp, not "${text}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const shown = new URL(url.href);
    if (shown.password !== '') shown.password = '***';
    return `${option} needs an http: or https: URL, not "${shown.href}"`;
  }
  return url;
}

function usageError(output: Output, message: string): number {
  output.stderr(`ahma-list-tools: ${message}\n\n${USAGE}`);
  return EXIT_USAGE;
}
