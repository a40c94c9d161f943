// ahma-shell's command line, run as a process: usage, --help/--version, bad flags, the refused
// mode (a TTY on stdin), and the one-shot CLI (R8.9, R9). --mode http: test/e2e/http.test.ts.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, childEnv, E2E, PACKAGE_DIR } from '../support/harness.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

/** Quotes a word for the `sh -c` line util-linux `script` runs. */
const sh = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

describe('usage and flags', () => {
  it('R8.10: stdio mode refuses to run on a TTY, exits non-zero and explains how to register it (claude mcp add)', async () => {
    const scope = await e2e.scope();
    // util-linux script gives the server a pseudo-terminal as stdin/stdout; -e returns its exit code.
    const line = [process.execPath, BIN, '--mode', 'stdio', '--sandbox-scope', scope.dir]
      .map(sh)
      .join(' ');
    const result = await e2e.runCommand('script', ['-qec', line, '/dev/null'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stdout).toContain('claude mcp add');
    expect(result.stdout).toContain('--mode stdio');
    expect(result.stdout).toMatch(/MCP client/);
  });

  it('R8.10: a bare ahma-shell prints usage instead of waiting on stdin', async () => {
    const result = await e2e.run([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^Usage:\n {2}ahma-shell --mode stdio/);
    expect(result.stdout).toContain('--tool_name TOOL');
    expect(result.stderr).toBe('');
  });

  it('R8.10: --help and -h print the usage and exit 0', async () => {
    for (const flag of ['--help', '-h']) {
      const result = await e2e.run([flag]);
      expect(result.code, flag).toBe(0);
      expect(result.stdout, flag).toMatch(/^Usage:/);
      for (const option of [
        '--mode stdio|http',
        '--sandbox-scope',
        '--sync',
        '--inline-wait SECONDS',
        '--log-to-stderr',
        '--version',
      ]) {
        expect(result.stdout, flag).toContain(option);
      }
      expect(result.stderr, flag).toBe('');
    }
  });

  it('R8.10: --version and -v print the package version and exit 0', async () => {
    const { version } = JSON.parse(await readFile(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-v']) {
      const result = await e2e.run([flag]);
      expect(result.code, flag).toBe(0);
      expect(result.stdout, flag).toBe(`${version}\n`);
    }
  });

  it('R8.10: an unknown flag exits 2 naming it, with the usage on stderr and nothing on stdout', async () => {
    const result = await e2e.run(['--mode', 'stdio', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("Unknown option '--bogus'");
    expect(result.stderr).toContain('Usage:');
  });

  it('R8.10: an invalid --mode or --timeout exits 2 with a clear message', async () => {
    const mode = await e2e.run(['--mode', 'carrier-pigeon']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('--mode must be "stdio" or "http"');
    const timeout = await e2e.run(['--mode', 'stdio', '--timeout', 'soon']);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout must be a positive number');
  });

  it('R8.10: a --timeout or AHMA_TIMEOUT beyond one day exits 2 instead of timing every command out at once', async () => {
    // 3,000,000 s overflows Node's 32-bit timer, which would fire after 1 ms.
    const flag = await e2e.run(['--mode', 'stdio', '--timeout', '3000000']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('at most 86400');
    const scope = await e2e.scope();
    const env = await e2e.run(['--tool_name', 'sandboxed_shell', '--', 'echo', 'x'], {
      cwd: scope.dir,
      env: { ...scope.env, AHMA_TIMEOUT: '3000000' },
    });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('at most 86400');
    const day = await e2e.run(
      ['--tool_name', 'sandboxed_shell', '--timeout', '86400', '--', 'echo', 'x'],
      {
        cwd: scope.dir,
        env: scope.env,
      },
    );
    expect(day.stdout).toBe('x\n');
    expect(day.code).toBe(0);
  });

  it('SPEC §3 inline wait: --inline-wait (or AHMA_INLINE_WAIT) outside 0…50 seconds exits 2 with a clear message', async () => {
    for (const value of ['-1', '51', 'soon', '']) {
      const result = await e2e.run(['--mode', 'stdio', `--inline-wait=${value}`]);
      expect(result.code, value).toBe(2);
      expect(result.stderr, value).toContain(
        '--inline-wait must be a number of seconds from 0 to 50',
      );
    }
    const fromEnv = await e2e.run(['--mode', 'stdio'], {
      env: { ...childEnv(), AHMA_INLINE_WAIT: 'never' },
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('--inline-wait must be');
  });

  it('R8.10: the stdio server exits 0 when its client closes stdin', async () => {
    const scope = await e2e.scope();
    // stdin is /dev/null: the "client" leaves at once.
    const result = await e2e.run(['--mode', 'stdio', '--sandbox-scope', scope.dir], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
  });
});

describe('one-shot CLI', () => {
  it('R8.9: --tool_name sandboxed_shell --tool_args runs it synchronously, prints its output and exits with its code', async () => {
    const scope = await e2e.scope();
    const result = await e2e.run(
      ['--tool_name', 'sandboxed_shell', '--tool_args', '{"command":"echo hi; exit 3"}'],
      {
        cwd: scope.dir,
        env: scope.env,
      },
    );
    expect(result.stdout).toBe('hi\n');
    expect(result.code).toBe(3);
  });

  it('R8.9: the one-shot command runs in the sandbox scope (the working directory by default)', async () => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const inScope = await e2e.run(
      ['--tool_name', 'sandboxed_shell', '--tool_args', '{"command":"pwd; echo x > here.txt"}'],
      {
        cwd: scope.dir,
        env: scope.env,
      },
    );
    expect(inScope).toMatchObject({ code: 0, stdout: `${scope.dir}\n` });
    const escape = await e2e.run(
      [
        '--tool_name',
        'sandboxed_shell',
        '--sandbox-scope',
        scope.dir,
        '--tool_args',
        JSON.stringify({ command: `echo x > ${outside}/x` }),
      ],
      { cwd: scope.dir, env: scope.env },
    );
    expect(escape.code).toBe(1);
    expect(escape.stdout).toContain('Permission denied');
  });

  it('R9: words after -- fill the positionals of a definition tool', async () => {
    const scope = await e2e.scope();
    const result = await e2e.run(['--tool_name', 'argv', '--', 'word1', 'word2', '$(id)'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(['word1', 'word2', '$(id)']);
    const both = await e2e.run(['--tool_name', 'argv', '--tool_args', '{"text":"t"}', '--', 'w'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(JSON.parse(both.stdout)).toEqual(['--text', 't', 'w']);
  });

  it('R9: a word after -- that is not a valid number for a number positional exits 2 with a usage message, not a stack trace', async () => {
    const scope = await e2e.scope();
    const tools = join(scope.dir, 'count-tools');
    await mkdir(tools);
    await writeFile(
      join(tools, 'count.json'),
      JSON.stringify({
        name: 'count',
        description: 'Prints the argv it received.',
        command: 'node -e process.stdout.write(JSON.stringify(process.argv.slice(1))) --',
        synchronous: true,
        subcommand: [
          {
            name: 'default',
            description: 'Print the argv as JSON.',
            positional_args: [
              { name: 'times', type: 'integer', required: true },
              { name: 'ratios', type: 'array', items: { type: 'number' } },
            ],
          },
        ],
      }),
    );
    const run = (words: string[]) =>
      e2e.run(['--tool_name', 'count', '--tools-dir', tools, '--', ...words], {
        cwd: scope.dir,
        env: scope.env,
      });
    const bad = await run(['abc']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('argument "times" must be an integer');
    expect(bad.stderr).not.toMatch(/SyntaxError|\n\s+at /);
    const badItem = await run(['3', '0.5', 'half']);
    expect(badItem.code).toBe(2);
    expect(badItem.stderr).toContain('argument "ratios/1" must be a number');
    const good = await run(['3', '0.5', '2']);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toEqual(['3', '0.5', '2']);
  });

  it('R8.9: a built-in that answers without running a command prints its answer and exits 0', async () => {
    const scope = await e2e.scope();
    const status = await e2e.run(['--tool_name', 'status'], { cwd: scope.dir, env: scope.env });
    expect(status).toMatchObject({ code: 0, stdout: 'status: no operations.\n' });
    const bundles = await e2e.run(['--tool_name', 'activate_tools'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(bundles.code).toBe(0);
    expect(bundles.stdout).toContain('git');
  });

  it('R9: words after -- form the sandboxed_shell command', async () => {
    const scope = await e2e.scope();
    const result = await e2e.run(['--tool_name', 'sandboxed_shell', '--', 'echo', 'hello'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result).toMatchObject({ code: 0, stdout: 'hello\n' });
  });

  it('R8.9: invalid --tool_args JSON exits 2 with a message and runs nothing', async () => {
    const scope = await e2e.scope();
    const bad = await e2e.run(
      ['--tool_name', 'sandboxed_shell', '--tool_args', '{"command": "touch ran.txt"'],
      {
        cwd: scope.dir,
        env: scope.env,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('--tool_args is not valid JSON');
    const notObject = await e2e.run(
      ['--tool_name', 'sandboxed_shell', '--tool_args', '["touch ran.txt"]'],
      {
        cwd: scope.dir,
        env: scope.env,
      },
    );
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('--tool_args must be a JSON object');
  });

  it('R8.9: an unknown tool, bad arguments or a path outside the scope exit 2 with the reason on stderr', async () => {
    const scope = await e2e.scope();
    const options = { cwd: scope.dir, env: scope.env };
    const unknown = await e2e.run(['--tool_name', 'no_such_tool'], options);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no tool "no_such_tool"');
    expect(unknown.stderr).toContain('sandboxed_shell');
    const badArgs = await e2e.run(
      ['--tool_name', 'e2e_sync', '--tool_args', '{"value":1}'],
      options,
    );
    expect(badArgs.code).toBe(2);
    expect(badArgs.stderr).toContain('"value"');
    const outside = await e2e.run(['--tool_name', 'files_show', '--', '/etc/passwd'], options);
    expect(outside.code).toBe(2);
    expect(outside.stdout).toBe('');
    expect(outside.stderr).toContain('outside the sandbox scope');
    const withoutTool = await e2e.run(['--tool_args', '{}'], options);
    expect(withoutTool.code).toBe(2);
    expect(withoutTool.stderr).toContain('--tool_args needs --tool_name');
  });

  it('R8.9: a one-shot command that times out exits 124', async () => {
    const scope = await e2e.scope();
    const result = await e2e.run(['--tool_name', 'slow'], { cwd: scope.dir, env: scope.env });
    expect(result.code).toBe(124);
  });

  it('R8.9: a synchronous definition tool exits with its own code and prints only its output', async () => {
    const scope = await e2e.scope();
    const result = await e2e.run(['--tool_name', 'fails'], { cwd: scope.dir, env: scope.env });
    expect(result).toMatchObject({ code: 4, stdout: 'boom\nbang\nbye\n', stderr: '' });
  });
});

describe('SPEC §2 compat: a parameter named like an Object.prototype member', () => {
  it('SPEC §2 compat: a tool with an option "constructor" is callable with and without it (one-shot CLI)', async () => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(
      join(scope.dir, '.ahma', 'tools', 'proto.json'),
      JSON.stringify({
        name: 'proto',
        description: 'x',
        command: 'echo',
        synchronous: true,
        subcommand: [
          {
            name: 'default',
            description: 'd',
            options: [{ name: 'constructor', type: 'string' }],
          },
        ],
      }),
    );
    const call = (args: Record<string, unknown>) =>
      e2e.run(
        ['--sandbox-scope', scope.dir, '--tool_name', 'proto', '--tool_args', JSON.stringify(args)],
        { cwd: scope.dir, env: scope.env },
      );
    const without = await call({});
    expect(without.code, without.stderr).toBe(0);
    expect(without.stdout).toBe('\n');
    const given = await call({ constructor: 'x' });
    expect(given.code, given.stderr).toBe(0);
    expect(given.stdout).toBe('--constructor x\n');
  });
});
