// ahma-shell's command line (SPEC §7): the flags of runtime/flags.ts read from argv, else from
// their AHMA_* variables, into ServerOptions; the rules between flags; and the usage.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_TIMINGS, type Timings, type Environment } from '@ahma/core';
import { HEARTBEAT_INTERVAL_MS } from '../calls/heartbeat.js';
import { type AnyFlag, flagEntries, type FlagSettings, InvalidFlag } from '../runtime/flags.js';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT, type ServerOptions } from '../runtime/settings.js';

export type ParsedCommandLine =
  | { readonly kind: 'run'; readonly options: ServerOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'usage'; readonly error: string | undefined };

/** A flag's lines in --help: the flag in a column of 25, its help beside and beneath it. */
function optionLines(flag: AnyFlag): string {
  const left = flag.arg === undefined ? `--${flag.name}` : `--${flag.name} ${flag.arg}`;
  const [first = '', ...rest] = flag.help;
  const beneath = rest.map((line) => `\n${' '.repeat(27)}${line}`).join('');
  return `  ${left.padEnd(23)}  ${first}${beneath}\n`;
}

const OPTION_LINES = flagEntries()
  .map(([, flag]) => optionLines(flag))
  .join('');
const DEFAULT_URL = `http://${DEFAULT_HTTP_HOST}:${String(DEFAULT_HTTP_PORT)}/mcp`;

export const USAGE = `Usage:
  ahma-shell --mode stdio [options]             serve MCP over stdin/stdout (what MCP clients start)
  ahma-shell --mode http [options]              serve MCP over HTTP at ${DEFAULT_URL}
  ahma-shell --tool_name TOOL [--tool_args JSON] [-- WORDS…]
                                                run one tool synchronously and exit with its code
  ahma-shell doctor [options] [--json]          what the sandbox enforces on this machine
  ahma-shell grants list|revoke ID…             the grants people gave when Ahma asked

Options (each has an AHMA_* environment equivalent, e.g. --no-sandbox = AHMA_NO_SANDBOX=1):
${OPTION_LINES}  -h, --help               show this help
  -v, --version            show the version
`;

/** Flags that may be given without their value, and the value they then have. */
const BARE_VALUES = new Map<string, string>(
  flagEntries().flatMap(([, flag]): [string, string][] =>
    flag.type === 'text' && flag.valueWhenBare !== undefined
      ? [[`--${flag.name}`, flag.valueWhenBare]]
      : [],
  ),
);

/** argv with the value of each such flag given bare (last, or before another flag) spelt out. */
function withBareValues(flags: readonly string[]): string[] {
  return flags.flatMap((arg, index) => {
    const value = BARE_VALUES.get(arg);
    const next = flags[index + 1];
    return value !== undefined && (next === undefined || next.startsWith('-'))
      ? [arg, value]
      : [arg];
  });
}

/** parseArgs' options: the table's flags, and those that say what to do instead of serving. */
const PARSE_OPTIONS: ParseArgsConfig['options'] = {
  ...Object.fromEntries(
    flagEntries().map(([, flag]) => [
      flag.name,
      flag.type === 'switch'
        ? { type: 'boolean' }
        : { type: 'string', multiple: flag.type === 'list' && flag.repeatable },
    ]),
  ),
  tool_name: { type: 'string' },
  tool_args: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

export function parseCommandLine(argv: readonly string[], env: Environment): ParsedCommandLine {
  const dashDash = argv.indexOf('--');
  const flags = dashDash === -1 ? argv : argv.slice(0, dashDash);
  const rawArgs = dashDash === -1 ? [] : argv.slice(dashDash + 1);
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: withBareValues(flags),
      strict: true,
      allowPositionals: false,
      options: PARSE_OPTIONS,
    }));
  } catch (error) {
    return { kind: 'usage', error: error instanceof Error ? error.message : String(error) };
  }
  if (values['help'] === true) return { kind: 'help' };
  if (values['version'] === true) return { kind: 'version' };

  const settings = readFlags(values, env);
  if (settings instanceof InvalidFlag) return { kind: 'usage', error: settings.message };
  // Test-only: lets the e2e suite see heartbeats without waiting seconds for each (not in USAGE).
  const heartbeatText = env['AHMA_TEST_HEARTBEAT_MS'];
  const heartbeatMs =
    heartbeatText === undefined || heartbeatText === ''
      ? HEARTBEAT_INTERVAL_MS
      : Number(heartbeatText);
  if (!Number.isFinite(heartbeatMs) || heartbeatMs <= 0) {
    return {
      kind: 'usage',
      error: 'AHMA_TEST_HEARTBEAT_MS must be a positive number of milliseconds',
    };
  }
  const timings = testTimings(env);
  if (timings instanceof InvalidFlag) return { kind: 'usage', error: timings.message };
  if (settings.httpPort === undefined && settings.httpSocket === undefined) {
    return { kind: 'usage', error: '--http-port none needs --http-socket PATH' };
  }
  if (settings.opsPage !== undefined && settings.mode === 'http') {
    return {
      kind: 'usage',
      error: '--ops-page is for stdio: an HTTP server serves the page at /ops',
    };
  }
  const toolName = stringValue(values['tool_name']);
  const toolArgs = stringValue(values['tool_args']);
  if (toolArgs !== undefined && toolName === undefined) {
    return { kind: 'usage', error: '--tool_args needs --tool_name' };
  }
  if (settings.mode === undefined && toolName === undefined) {
    return { kind: 'usage', error: undefined };
  }
  return {
    kind: 'run',
    options: {
      ...settings,
      registry: settings.registry || settings.registryFile !== undefined,
      heartbeatMs,
      testTimings: timings,
      toolName,
      toolArgs,
      rawArgs,
    },
  };
}

/** Every flag of the table, from argv else its variable, read and checked in the table's order. */
function readFlags(values: Record<string, unknown>, env: Environment): FlagSettings | InvalidFlag {
  const settings: Record<string, unknown> = {};
  for (const [field, flag] of flagEntries()) {
    const value = readFlag(flag, values[flag.name], env);
    if (value instanceof InvalidFlag) return value;
    settings[field] = value;
  }
  // FLAGS has an entry for every field of FlagSettings, whose read gives that field's type.
  return settings as FlagSettings;
}

function readFlag(flag: AnyFlag, given: unknown, env: Environment): unknown {
  const variable = flag.envReadBy === 'core' ? undefined : env[flag.env];
  const fromEnv = variable === '' ? undefined : variable;
  switch (flag.type) {
    case 'switch':
      return given === true || (fromEnv !== undefined && /^(1|true|yes|on)$/i.test(fromEnv));
    case 'text':
      return flag.read(stringValue(given) ?? fromEnv);
    case 'list':
      // A flag given replaces the variable; a repeated flag's lists are joined.
      return flag.read(
        Array.isArray(given)
          ? given.flatMap((each) => list(stringValue(each)))
          : list(stringValue(given) ?? fromEnv),
      );
  }
}

function stringValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A comma-separated list, without empty items. */
function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/**
 * Test-only (not in USAGE, like AHMA_TEST_HEARTBEAT_MS): AHMA_TEST_TIMINGS, a JSON object of some
 * of the engine's waits in milliseconds (core's Timings, e.g. `{"graceMs":300}`), so that the
 * suite sees a stopped command escalate without waiting seconds at each step. Each may only be
 * shortened (at most its default): it changes how soon a stopped command is killed, never whether,
 * nor what a command may reach. A malformed value refuses the start; unset, the defaults apply.
 */
function testTimings(env: Environment): Partial<Timings> | InvalidFlag {
  const text = env['AHMA_TEST_TIMINGS'];
  if (text === undefined || text === '') return {};
  const names = Object.keys(DEFAULT_TIMINGS) as (keyof Timings)[];
  const problem = `AHMA_TEST_TIMINGS must be a JSON object of milliseconds above 0 and at most the default for ${names.join(', ')}: ${text}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new InvalidFlag(problem);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return new InvalidFlag(problem);
  }
  const timings: Partial<Record<keyof Timings, number>> = {};
  for (const [name, value] of Object.entries(parsed)) {
    const key = names.find((known) => known === name);
    if (key === undefined || typeof value !== 'number' || !(value > 0))
      return new InvalidFlag(problem);
    if (value > DEFAULT_TIMINGS[key]) return new InvalidFlag(problem);
    timings[key] = value;
  }
  return timings;
}
