// The flag table (runtime/flags.ts) is the one declaration of ahma-shell's flags: every flag has
// its AHMA_* variable, which stands in for it; --help lists every flag; and what an isolated
// session's process is given reads back to the server's options.
import { readFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { resolveSandboxScope, resolveToolsDir } from '@ahma/core';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, USAGE } from '../../src/cli/options.js';
import { isolatedChildCommand } from '../../src/isolation/child-command.js';
import { flagEntries } from '../../src/runtime/flags.js';
import type { ServerOptions } from '../../src/runtime/settings.js';

/** A valid value of each flag other than its default (a switch is given bare, or its variable 1). */
const SAMPLES: Readonly<Record<string, string | true>> = {
  mode: 'http',
  'tools-dir': '/srv/tools',
  tools: 'git,cargo',
  'no-tool-discovery': true,
  introspect: 'grep,/usr/bin/sed',
  'sandbox-scope': '/srv/project',
  'no-sandbox': true,
  'keep-capabilities': true,
  'state-dir': '/srv/state',
  sync: true,
  timeout: '30',
  'max-output-tokens': '2500',
  'inline-wait': '0',
  'no-shell-pool': true,
  'no-hot-reload': true,
  registry: true,
  'registry-file': '/srv/registry.json',
  'mcp-config': '/srv/mcp.json',
  'oauth-callback-port': '9090',
  'ops-page': '8099',
  'env-deny': 'AWS_*,MY_KEY',
  profile: 'cargo,rustup',
  'allow-read': '~/ref,/opt/sdk',
  'deny-read': '~/.config/secret',
  'allow-write': '/var/cache/tool',
  network: 'proxy',
  'allow-host': '*.crates.io,127.0.0.1:5432',
  'deny-host': 'evil.example',
  'allow-handoff-writes': '.git/hooks,.vscode',
  'session-isolation': true,
  'allowed-roots': '/srv,/opt',
  'max-sessions': '4',
  'session-memory-mb': '512',
  'http-host': '127.0.0.2',
  'http-port': '4000',
  'http-token-file': '/srv/token',
  'http-no-auth': true,
  'claude-channel': true,
  'http-socket': '/srv/mcp.sock',
  'log-to-stderr': true,
  debug: true,
};

const FLAGS = flagEntries();

function run(argv: readonly string[], env: Record<string, string> = {}): ServerOptions {
  const parsed = parseCommandLine(argv, env);
  if (parsed.kind !== 'run')
    throw new Error(`not a server command line: ${JSON.stringify(parsed)}`);
  return parsed.options;
}

/** One flag given its sample. */
function given(name: string): string[] {
  const sample = SAMPLES[name];
  return sample === true ? [`--${name}`] : [`--${name}`, String(sample)];
}

/** The variable of one flag set to its sample. */
function variable(name: string): [string, string] {
  const flag = FLAGS.find(([, each]) => each.name === name)?.[1];
  if (flag === undefined) throw new Error(`no flag --${name}`);
  const sample = SAMPLES[name];
  return [flag.env, sample === true ? '1' : String(sample)];
}

describe.concurrent('the flag table', () => {
  it('SPEC §7: every flag of the table has a sample here (a new flag gets its checks below)', () => {
    expect(FLAGS.map(([, flag]) => flag.name).sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  it('SPEC §7: every flag has an environment variable, AHMA_ and its name in capitals, none shared', () => {
    for (const [, flag] of FLAGS) {
      expect(flag.env, flag.name).toBe(`AHMA_${flag.name.toUpperCase().replaceAll('-', '_')}`);
    }
    expect(new Set(FLAGS.map(([, flag]) => flag.env)).size).toBe(FLAGS.length);
  });

  it('SPEC §7: --help lists every flag on a line of its own, in the order of the table', () => {
    const positions = FLAGS.map(([, flag]) => {
      const line = new RegExp(`^ {2}--${flag.name}(?= |$)`, 'm').exec(USAGE);
      expect(line, flag.name).not.toBeNull();
      return line?.index ?? -1;
    });
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it("SPEC §7: the README's command-line table has a row for every flag, with its variable", () => {
    const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
    for (const [, flag] of FLAGS) {
      const row = new RegExp(`^\\| \`--${flag.name}[ \`].*\\| \`${flag.env}[=\`]`, 'm');
      expect(readme, flag.name).toMatch(row);
    }
  });

  it('SPEC §7: each variable stands in for its flag; the flag, when given, wins over it', () => {
    const defaults = run(['--mode', 'stdio']);
    for (const [field, flag] of FLAGS) {
      if (flag.envReadBy === 'core' || field === 'mode') continue;
      const fromFlag = run(['--mode', 'stdio', ...given(flag.name)]);
      const fromVariable = run(['--mode', 'stdio'], Object.fromEntries([variable(flag.name)]));
      expect(fromVariable[field], flag.env).toEqual(fromFlag[field]);
      expect(fromVariable[field], flag.env).not.toEqual(defaults[field]);
    }
    expect(run([], { AHMA_MODE: 'http' }).mode).toBe('http');
    expect(run(['--mode', 'stdio'], { AHMA_MODE: 'http' }).mode).toBe('stdio');
    expect(run(['--mode', 'stdio', '--timeout', '30'], { AHMA_TIMEOUT: '40' }).timeoutSeconds).toBe(
      30,
    );
  });

  it('R1.2, R7.1: AHMA_TOOLS_DIR and AHMA_SANDBOX_SCOPE are the variables core reads for --tools-dir and --sandbox-scope', async () => {
    const dir = await realpath(tmpdir());
    const env = { AHMA_TOOLS_DIR: '/srv/tools', AHMA_SANDBOX_SCOPE: dir };
    const options = run(['--mode', 'stdio'], env);
    expect(FLAGS.filter(([, flag]) => flag.envReadBy === 'core').map(([field]) => field)).toEqual([
      'toolsDir',
      'sandboxScope',
    ]);
    const scope = await resolveSandboxScope({ scope: options.sandboxScope, env, cwd: '/' });
    expect(scope).toBe(dir);
    expect(resolveToolsDir({ toolsDir: options.toolsDir, env, scope })).toEqual({
      dir: '/srv/tools',
      origin: 'env',
    });
  });
});

describe.concurrent("an isolated session's command line", () => {
  it('R8D.3: what serves HTTP, the mode, the scope and the remote servers stay with the server; every other flag is passed on', () => {
    expect(FLAGS.filter(([, flag]) => flag.toChild === 'no').map(([, flag]) => flag.name)).toEqual([
      'mode',
      'sandbox-scope',
      'mcp-config',
      'oauth-callback-port',
      'ops-page',
      'session-isolation',
      'allowed-roots',
      'max-sessions',
      'session-memory-mb',
      'http-host',
      'http-port',
      'http-token-file',
      'http-no-auth',
      'http-socket',
    ]);
  });

  it("R8D.3: parsed again, it gives the server's options for every flag passed on, and the defaults for the others", () => {
    // Every flag at once (--ops-page aside: it is for stdio, and the samples serve HTTP).
    const server = run(
      FLAGS.filter(([, flag]) => flag.name !== 'ops-page').flatMap(([, flag]) => given(flag.name)),
    );
    const child = isolatedChildCommand(server, '/srv', 'bin.js', 'node');
    const session = run(child.args.slice(child.args.indexOf('bin.js') + 1));
    const defaults = run(['--mode', 'stdio']);
    for (const [field, flag] of FLAGS) {
      const expected = flag.toChild === 'no' ? defaults[field] : server[field];
      expect(session[field], flag.name).toEqual(expected);
    }
    // Every flag passed on is on the command line (none only by its default).
    for (const [, flag] of FLAGS) {
      if (flag.toChild !== 'no') expect(child.args, flag.name).toContain(`--${flag.name}`);
    }
  });

  it("R8D.3: options from the variables reach a session's process on its command line, not only by inheritance", () => {
    const env = Object.fromEntries(
      FLAGS.filter(([, flag]) => flag.envReadBy !== 'core' && flag.name !== 'ops-page').map(
        ([, flag]) => variable(flag.name),
      ),
    );
    const server = run([], env);
    const { args } = isolatedChildCommand(server, '/srv', 'bin.js', 'node');
    const session = run(args.slice(args.indexOf('bin.js') + 1));
    for (const [field, flag] of FLAGS) {
      if (flag.toChild !== 'no') expect(session[field], flag.name).toEqual(server[field]);
    }
  });

  it('R8D.3: a server with every default gives a session every default', () => {
    const server = run(['--mode', 'http']);
    const { args } = isolatedChildCommand(server, '/srv', 'bin.js', 'node');
    const session = run(args.slice(args.indexOf('bin.js') + 1));
    expect(session).toEqual({ ...server, mode: 'stdio' });
  });
});
