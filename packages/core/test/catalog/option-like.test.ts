// SPEC §2 argv, "a value is data", over every tool of the bundled catalog (tools/) and of this
// repository's own tool set (.ahma/tools): for each positional, a value starting with "-" is either
// refused before anything runs or reaches the program where it cannot be an option (after "--",
// or replaced by an absolute path). The few arguments that deliberately take option-like values
// are listed here with the reason, so adding one is a reviewed change.
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AhmaError,
  ArgumentValidator,
  loadTools,
  prepareInvocation,
  type LoadedTool,
} from '../../src/index.js';
import { type ArgumentDefinition } from '../../src/definition/schema.js';
import { catalog, REPO_ROOT } from './helpers.js';

/** Positionals declaring accepts_options, as `tool argument`, and why that is harmless. */
const POSITIONALS_TAKING_OPTIONS: Readonly<Record<string, string>> = {
  // pnpm hands everything after the script name (or after `test`) to the script, reading none.
  'pnpm_run args': 'arguments of the script',
  'pnpm_test args': 'arguments of the test script',
  // The tools run any command the agent names; a pnpm option adds nothing to that.
  'pnpm_exec command': 'the command and its arguments',
  'pnpm_dlx command': 'the command and its arguments',
  // sys.argv of the script, module or -c code, which the tool runs anyway.
  'python args': "the script's arguments",
};

/** Options declaring accepts_options: false: npm's parser re-reads their "-x" values as options. */
const OPTIONS_REFUSING_DASHES = ['npm_init scope', 'npm_version preid', 'npm_version message'];

/**
 * How many catalog positionals end up each way (both calls' outcomes when they differ: git
 * config's value is refused alone, and follows "--" when name puts one before it).
 */
const EXPECTED_TALLY = {
  refused: 70,
  path: 36,
  'after --': 7,
  'refused / after --': 1,
  'accepts options': 5,
};

const INJECTED = '--ahma-injected=x';
const validator = new ArgumentValidator();

let tools: readonly LoadedTool[] = [];
let scope = '';

beforeAll(async () => {
  const own = await loadTools({
    toolsDir: { dir: join(REPO_ROOT, '.ahma', 'tools'), origin: 'option' },
  });
  expect(own.diagnostics).toEqual([]);
  // A sequence's parameters reach the tools of its steps, which are checked here themselves.
  tools = [...(await catalog()).tools, ...own.tools].filter((t) => t.leaf.sequence === undefined);
  scope = await realpath(await mkdtemp(join(tmpdir(), 'ahma-option-like-')));
});
afterAll(async () => {
  await rm(scope, { recursive: true, force: true });
});

/** A value that passes the tool's schema: the first enum value, else a plain one of the type. */
function plainValue(argument: ArgumentDefinition): unknown {
  const scalar = (type: string | undefined, allowed: readonly unknown[] | undefined): unknown =>
    allowed?.[0] ?? (type === 'integer' || type === 'number' ? 1 : 'plain');
  return argument.type === 'array'
    ? [scalar(argument.items?.type, argument.items?.enum)]
    : scalar(argument.type, argument.enum);
}

/** The same, but starting with "-". */
function dashedValue(argument: ArgumentDefinition): unknown {
  const scalar = (type: string | undefined): unknown =>
    type === 'integer' || type === 'number' ? -7 : INJECTED;
  return argument.type === 'array' ? [scalar(argument.items?.type)] : scalar(argument.type);
}

/** The argv a call produces, or the AhmaError that refused it. */
async function attempt(
  tool: LoadedTool,
  args: Record<string, unknown>,
): Promise<string[] | AhmaError> {
  try {
    const prepared = await prepareInvocation(tool.leaf, args, { scope });
    await prepared.cleanup();
    return prepared.argv;
  } catch (error) {
    if (error instanceof AhmaError) return error;
    throw error;
  }
}

interface Case {
  readonly tool: LoadedTool;
  readonly positional: ArgumentDefinition;
  readonly label: string;
}

function cases(): Case[] {
  return tools.flatMap((tool) =>
    tool.leaf.positionals.map((positional) => ({
      tool,
      positional,
      label: `${tool.name} ${positional.name}`,
    })),
  );
}

describe('every catalog positional, given a value starting with "-"', () => {
  it('SPEC §2 argv: is refused (naming it) or reaches the program after "--", as a path, or where declared harmless', async () => {
    const all = cases();
    expect(all.length).toBeGreaterThan(100); // the whole catalog, not an empty loop
    // Per positional, how each of the two calls went ("refused", "after --", …).
    const outcomes = new Map<string, Set<string>>();
    const record = (label: string, outcome: string) =>
      outcomes.set(label, (outcomes.get(label) ?? new Set()).add(outcome));
    for (const { tool, positional, label } of all) {
      const required = Object.fromEntries(
        [...tool.leaf.options, ...tool.leaf.positionals]
          .filter((argument) => argument.required === true)
          .map((argument) => [argument.name, plainValue(argument)]),
      );
      // Alone (with only what the call requires), then with every other positional given too,
      // so a "--" put by an earlier positional is exercised as well.
      const others = Object.fromEntries(tool.leaf.positionals.map((p) => [p.name, plainValue(p)]));
      for (const base of [required, { ...required, ...others }]) {
        const args = { ...base, [positional.name]: dashedValue(positional) };
        if (positional.enum !== undefined || positional.items?.enum !== undefined) {
          // The schema already keeps such a value out.
          expect(validator.validate(tool.inputSchema, args), label).not.toEqual([]);
          record(label, 'enum');
          continue;
        }
        expect(validator.validate(tool.inputSchema, args), label).toEqual([]);
        const result = await attempt(tool, args);
        const injected = String(elementOf(dashedValue(positional)));
        if (result instanceof AhmaError) {
          expect(result.code, label).toBe('ARGV_INVALID');
          expect(result.message, label).toContain(`argument "${positional.name}": "${injected}"`);
          record(label, 'refused');
          continue;
        }
        const prefix = tool.leaf.command.length + tool.leaf.subcommandPath.length;
        const at = result.indexOf(injected, prefix);
        if (at < 0) {
          // Substituted: only a path is, by its absolute form.
          expect(positional.format ?? positional.items?.format, label).toBe('path');
          expect(result, label).toContain(join(scope, injected));
          record(label, 'path');
          continue;
        }
        const dashes = result.indexOf('--', prefix);
        if (dashes >= 0 && dashes < at) {
          record(label, 'after --');
          continue;
        }
        expect(POSITIONALS_TAKING_OPTIONS[label], `${label}: ${result.join(' ')}`).toBeDefined();
        expect(positional.accepts_options, label).toBe(true);
        record(label, 'accepts options');
      }
    }
    // Every declared exception is still in the catalog and still needed.
    for (const label of Object.keys(POSITIONALS_TAKING_OPTIONS)) {
      expect([...(outcomes.get(label) ?? [])], label).toEqual(['accepts options']);
    }
    // How the catalog's positionals are handled, by kind: most are refused, paths are made
    // absolute, pass-through arguments follow "--".
    const tally = new Map<string, number>();
    for (const seen of outcomes.values()) {
      const key = [...seen].join(' / ');
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    expect(Object.fromEntries(tally)).toEqual(EXPECTED_TALLY);
  });

  it('SPEC §2 argv: only the reviewed positionals declare accepts_options', () => {
    const declared = cases()
      .filter(({ positional }) => positional.accepts_options === true)
      .map(({ label }) => label);
    expect(declared.sort()).toEqual(Object.keys(POSITIONALS_TAKING_OPTIONS).sort());
  });
});

describe('catalog options whose program re-reads a "-" value as an option', () => {
  it('SPEC §2 argv: are exactly the reviewed ones, and refuse such a value before anything runs', async () => {
    const refusing = tools.flatMap((tool) =>
      tool.leaf.options
        .filter((option) => option.accepts_options === false)
        .map((option) => ({ tool, option, label: `${tool.name} ${option.name}` })),
    );
    expect(refusing.map(({ label }) => label).sort()).toEqual([...OPTIONS_REFUSING_DASHES].sort());
    for (const { tool, option, label } of refusing) {
      const result = await attempt(tool, { [option.name]: '--json' });
      expect(result, label).toBeInstanceOf(AhmaError);
      expect((result as AhmaError).message, label).toContain(`argument "${option.name}"`);
      expect(await attempt(tool, { [option.name]: 'beta' }), label).toBeInstanceOf(Array);
    }
  });
});

function elementOf(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}
