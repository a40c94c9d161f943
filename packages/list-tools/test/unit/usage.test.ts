// ahma-list-tools's command line, called in-process: every usage error, --help and --version.
// None of these reaches a server.
import { describe, expect, it } from 'vitest';
import { listTools, packageJson } from '../support/list-tools.js';

describe.concurrent('ahma-list-tools usage', () => {
  it.each([
    ['no server', [], 'no server: give -- CMD ARGS… or --http URL'],
    ['both servers', ['--http', 'http://127.0.0.1:1/mcp', '--', 'node'], 'not both'],
    ['a bad --format', ['--format', 'yaml', '--', 'node'], '--format must be "text" or "json"'],
    ['a bad --timeout', ['--timeout', '0', '--', 'node'], '--timeout must be a positive number'],
    ['a --timeout too long', ['--timeout', '3e6', '--', 'node'], 'up to 2147483, not "3e6"'],
    ['a command without --', ['node', 'server.js'], 'unexpected argument "node"'],
    ['nothing after --', ['--'], 'no command after --'],
    ['a relative --http URL', ['--http', 'localhost/mcp'], '--http needs an absolute URL'],
    ['a non-HTTP URL', ['--http', 'ftp://example.com/mcp'], '--http needs an http: or https: URL'],
    ['an unknown option', ['--oauth', '--', 'node'], "Unknown option '--oauth'"],
    [
      'a bad --callback-port',
      ['--callback-port', '0', '--http', 'http://127.0.0.1:1/mcp'],
      '--callback-port must be a port number',
    ],
    ['a relative --logout URL', ['--logout', 'localhost/mcp'], '--logout needs an absolute URL'],
  ])('R6.10: %s → exit 2 with the usage', async (_case, args, message) => {
    const run = await listTools(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain('\nUsage: ahma-list-tools [--format text|json]');
  });

  it('R6.10: --help prints the usage with the OAuth options; --version the version', async () => {
    const help = await listTools(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ahma-list-tools /);
    for (const option of [
      '--callback-port PORT',
      '--client-id ID',
      '--no-browser',
      '--logout URL',
    ]) {
      expect(help.stdout).toContain(option);
    }
    expect(help.stdout).toContain('AHMA_HTTP_CLIENT_TOKEN_PATH');
    expect(help.stdout).toContain('--timeout SECONDS');
    const version = await listTools(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${packageJson.version}\n` });
  });
});
