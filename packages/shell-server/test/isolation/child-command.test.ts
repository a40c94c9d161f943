// The command line of an isolated session's process (R8D.3): the server's own flags, absolute.
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/options.js';
import { ahmaShellBin } from '../../src/package.js';
import { isolatedChildCommand } from '../../src/isolation/child-command.js';
import { flagEntries } from '../../src/runtime/flags.js';

function options(argv: string[]) {
  const parsed = parseCommandLine(['--mode', 'http', ...argv], {});
  if (parsed.kind !== 'run') throw new Error('not a server command line');
  return parsed.options;
}

describe('isolatedChildCommand', () => {
  it("R8D.3: runs this package's ahma-shell --mode stdio under the given Node (gc exposed, for a spare), with the defaults spelled out", () => {
    const command = isolatedChildCommand(
      options([]),
      '/srv',
      '/pkg/bin/ahma-shell.js',
      '/usr/bin/node',
    );
    expect({ file: command.file, args: command.args }).toEqual({
      file: '/usr/bin/node',
      args: [
        '--expose-gc',
        '/pkg/bin/ahma-shell.js',
        '--mode',
        'stdio',
        '--timeout',
        '600',
        '--max-output-tokens',
        '10000',
        '--inline-wait',
        '5',
      ],
    });
    expect(isolatedChildCommand(options([]), '/srv').args[1]).toBe(ahmaShellBin());
    expect(isolatedChildCommand(options([]), '/srv').file).toBe(process.execPath);
  });

  it("R8D.3: the process inherits none of the flags' variables but core's own two: its command line says what they would", () => {
    const { unsetEnv = [] } = isolatedChildCommand(options([]), '/srv');
    const variables = flagEntries().map(([, flag]) => flag.env);
    expect([...unsetEnv].sort()).toEqual(
      variables.filter((name) => name !== 'AHMA_TOOLS_DIR' && name !== 'AHMA_SANDBOX_SCOPE').sort(),
    );
    expect(unsetEnv).toContain('AHMA_ALLOW_WRITE');
    expect(unsetEnv).toContain('AHMA_MCP_CONFIG');
  });

  it("R8D.3, R7.9: passes the server's flags on (--env-deny too), relative paths made absolute; HTTP, isolation and the scope stay with the server", () => {
    const { args } = isolatedChildCommand(
      options([
        '--session-isolation',
        '--http-port',
        '4000',
        '--sandbox-scope',
        '/srv/project',
        '--tools-dir',
        'tools',
        '--tools',
        'git,cargo',
        '--no-tool-discovery',
        '--no-sandbox',
        '--keep-capabilities',
        '--state-dir',
        'state',
        '--sync',
        '--timeout',
        '30',
        '--max-output-tokens',
        '2500',
        '--inline-wait',
        '0',
        '--no-shell-pool',
        '--no-hot-reload',
        '--registry-file',
        'reg.json',
        '--env-deny',
        'AWS_*, MY_KEY',
        '--log-to-stderr',
        '--debug',
      ]),
      '/srv',
      'bin.js',
      'node',
    );
    expect(args).toEqual([
      '--expose-gc',
      'bin.js',
      '--mode',
      'stdio',
      '--tools-dir',
      '/srv/tools',
      '--tools',
      'git,cargo',
      '--no-tool-discovery',
      '--no-sandbox',
      '--keep-capabilities',
      '--state-dir',
      '/srv/state',
      '--sync',
      '--timeout',
      '30',
      '--max-output-tokens',
      '2500',
      '--inline-wait',
      '0',
      '--no-shell-pool',
      '--no-hot-reload',
      '--registry',
      '--registry-file',
      '/srv/reg.json',
      '--env-deny',
      'AWS_*,MY_KEY',
      '--log-to-stderr',
      '--debug',
    ]);
  });
});

describe('isolatedChildCommand and AHMA_ENV_DENY', () => {
  it('R7.9: entries from the environment are passed on like the flag', () => {
    const parsed = parseCommandLine(['--mode', 'http'], { AHMA_ENV_DENY: 'SECRET_*' });
    if (parsed.kind !== 'run') throw new Error('not a server command line');
    const { args } = isolatedChildCommand(parsed.options, '/srv', 'bin.js', 'node');
    expect(args.slice(args.indexOf('--env-deny'), args.indexOf('--env-deny') + 2)).toEqual([
      '--env-deny',
      'SECRET_*',
    ]);
  });
});

describe('isolatedChildCommand and the read, write and profile options', () => {
  it("R7.10, R7.14: a session's process gets the server's --profile, --allow-read, --deny-read and --allow-write", () => {
    const { args } = isolatedChildCommand(
      options([
        '--profile',
        'cargo,rustup',
        '--allow-read',
        '~/ref,/opt/sdk',
        '--deny-read',
        '~/.config/secret',
        '--allow-write',
        '/var/cache/tool',
      ]),
      '/srv',
      'bin.js',
      'node',
    );
    const value = (flag: string) => args[args.indexOf(flag) + 1];
    expect(value('--profile')).toBe('cargo,rustup');
    expect(value('--allow-read')).toBe('~/ref,/opt/sdk');
    expect(value('--deny-read')).toBe('~/.config/secret');
    expect(value('--allow-write')).toBe('/var/cache/tool');
    // And the child reads them back as the server did.
    const parsed = parseCommandLine(args.slice(2), {});
    expect(parsed.kind === 'run' && parsed.options).toMatchObject({
      profiles: ['cargo', 'rustup'],
      allowRead: ['~/ref', '/opt/sdk'],
      denyRead: ['~/.config/secret'],
      allowWrite: ['/var/cache/tool'],
    });
  });
});

describe('isolatedChildCommand and the network options', () => {
  it("R7.16, R7.17: a session's process gets the server's --network, --allow-host and --deny-host", () => {
    const { args } = isolatedChildCommand(
      options([
        '--network',
        'proxy',
        '--allow-host',
        '*.crates.io,127.0.0.1:5432',
        '--deny-host',
        'evil.example',
      ]),
      '/srv',
      'bin.js',
      'node',
    );
    const parsed = parseCommandLine(args.slice(2), {});
    expect(parsed.kind === 'run' && parsed.options).toMatchObject({
      network: 'proxy',
      allowHosts: ['*.crates.io', '127.0.0.1:5432'],
      denyHosts: ['evil.example'],
    });
  });
});
