// ahma-list-tools [--format text|json] [--timeout SECONDS] (-- CMD ARGS… | --http URL): connects to
// any MCP server and prints its tools and their parameters. Exit 0 listed, 1 the server could not be
// started, reached or listed, 2 usage error.
import { parseArgs } from 'node:util';
import packageJson from '../package.json' with { type: 'json' };
import { describeTarget, listServerTools, type ListTarget } from './connect.js';
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

const DEFAULT_TIMEOUT_SECONDS = 30;
// setTimeout's limit (2^31 - 1 ms); a longer delay would fire at once.
const MAX_TIMEOUT_SECONDS = 2_147_483;

const USAGE = `Usage: ahma-list-tools [--format text|json] [--timeout SECONDS] (-- CMD ARGS… | --http URL)

Connects to an MCP server, lists all its tools and prints each with its parameters.

Server (exactly one):
  -- CMD ARGS…        start CMD as a stdio MCP server (it inherits the environment and working
                      directory; its stderr is shown only if it fails)
  --http URL          connect to a Streamable HTTP MCP endpoint, e.g. http://127.0.0.1:3001/mcp
                      No OAuth in this version: a server that answers 401 cannot be listed.

Options:
  --format text|json  output format (default: text)
  --timeout SECONDS   limit for connecting and listing together (default: ${DEFAULT_TIMEOUT_SECONDS})
  -h, --help          show this help
  -v, --version       show the version

Exit status: 0 listed, 1 the server could not be started, reached or listed, 2 usage error.
`;

export async function runListTools(argv: readonly string[], output: Output): Promise<number> {
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

  const target = parseTarget(values.http, terminator === undefined ? undefined : positionals);
  if (typeof target === 'string') return usageError(output, target);

  try {
    const listing = await listServerTools(target, { timeoutMs: seconds * 1000 });
    output.stdout(format === 'json' ? renderJson(listing) : renderText(listing));
    return EXIT_OK;
  } catch (error) {
    if (!(error instanceof ListToolsError)) throw error;
    output.stderr(`ahma-list-tools: ${error.message}\n`);
    return EXIT_FAILED;
  }
}

/** The one server named on the command line, or why the arguments do not name exactly one. */
function parseTarget(
  http: string | undefined,
  command: readonly string[] | undefined,
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
  let url: URL;
  try {
    url = new URL(http);
  } catch {
    return `--http needs an absolute URL such as http://127.0.0.1:3001/mcp, not "${http}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `--http needs an http: or https: URL, not "${describeTarget({ kind: 'http', url })}"`;
  }
  return { kind: 'http', url };
}

function usageError(output: Output, message: string): number {
  output.stderr(`ahma-list-tools: ${message}\n\n${USAGE}`);
  return EXIT_USAGE;
}
