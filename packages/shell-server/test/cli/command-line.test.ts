// ahma-shell's command line, run in-process (cli/run.ts, as bin/ahma-shell.js runs it): usage,
// --help/--version, bad flags, and the one-shot CLI (R8.9, R9), each run with its own arguments,
// environment and directory. The binary's own smoke tests: test/e2e/cli.test.ts.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { childEnv, it, PACKAGE_DIR } from '../support/harness.js';

describe.concurrent('usage and flags', { timeout: 60_000 }, () => {
  it('R8.10: a bare ahma-shell prints usage instead of waiting on stdin', async ({ e2e }) => {
    const result = await e2e.runInProcess([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^Usage:\n {2}ahma-shell --mode stdio/);
    expect(result.stdout).toContain('--tool_name TOOL');
    expect(result.stderr).toBe('');
  });

  it('R8.10: --help and -h print the usage and exit 0', async ({ e2e }) => {
    const flags = ['--help', '-h'];
    const results = await Promise.all(flags.map((flag) => e2e.runInProcess([flag])));
    for (const [index, flag] of flags.entries()) {
      const result = results[index];
      if (result === undefined) throw new Error(`no result for ${flag}`);
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

  it('R8.10: --version and -v print the package version and exit 0', async ({ e2e }) => {
    const { version } = JSON.parse(await readFile(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      version: string;
    };
    const flags = ['--version', '-v'];
    const results = await Promise.all(flags.map((flag) => e2e.runInProcess([flag])));
    flags.forEach((flag, index) => {
      expect(results[index]?.code, flag).toBe(0);
      expect(results[index]?.stdout, flag).toBe(`${version}\n`);
    });
  });

  it('R8.10: an unknown flag exits 2 naming it, with the usage on stderr and nothing on stdout', async ({
    e2e,
  }) => {
    const result = await e2e.runInProcess(['--mode', 'stdio', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("Unknown option '--bogus'");
    expect(result.stderr).toContain('Usage:');
  });

  it('R8.10: an invalid --mode or --timeout exits 2 with a clear message', async ({ e2e }) => {
    const [mode, timeout] = await Promise.all([
      e2e.runInProcess(['--mode', 'carrier-pigeon']),
      e2e.runInProcess(['--mode', 'stdio', '--timeout', 'soon']),
    ]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('--mode must be "stdio" or "http"');
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout must be a positive number');
  });

  it('R8.10: a --timeout or AHMA_TIMEOUT beyond one day exits 2 instead of timing every command out at once', async ({
    e2e,
  }) => {
    // 3,000,000 s overflows Node's 32-bit timer, which would fire after 1 ms.
    const scope = await e2e.scope();
    const [flag, env, day] = await Promise.all([
      e2e.runInProcess(['--mode', 'stdio', '--timeout', '3000000']),
      e2e.runInProcess(['--tool_name', 'sandboxed_shell', '--', 'echo', 'x'], {
        cwd: scope.dir,
        env: { ...scope.env, AHMA_TIMEOUT: '3000000' },
      }),
      e2e.runInProcess(
        ['--tool_name', 'sandboxed_shell', '--timeout', '86400', '--', 'echo', 'x'],
        {
          cwd: scope.dir,
          env: scope.env,
        },
      ),
    ]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('at most 86400');
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('at most 86400');
    expect(day.stdout).toBe('x\n');
    expect(day.code).toBe(0);
  });

  it('SPEC §3 inline wait: --inline-wait (or AHMA_INLINE_WAIT) outside 0…50 seconds exits 2 with a clear message', async ({
    e2e,
  }) => {
    const values = ['-1', '51', 'soon', ''];
    const [fromEnv, ...results] = await Promise.all([
      e2e.runInProcess(['--mode', 'stdio'], { env: { ...childEnv(), AHMA_INLINE_WAIT: 'never' } }),
      ...values.map((value) => e2e.runInProcess(['--mode', 'stdio', `--inline-wait=${value}`])),
    ]);
    values.forEach((value, index) => {
      expect(results[index]?.code, value).toBe(2);
      expect(results[index]?.stderr, value).toContain(
        '--inline-wait must be a number of seconds from 0 to 50',
      );
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('--inline-wait must be');
  });
});

describe.concurrent('one-shot CLI', { timeout: 60_000 }, () => {
  it('R8.9: the one-shot command runs in the sandbox scope (the working directory by default)', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const [inScope, escape] = await Promise.all([
      e2e.runInProcess(
        ['--tool_name', 'sandboxed_shell', '--tool_args', '{"command":"pwd; echo x > here.txt"}'],
        { cwd: scope.dir, env: scope.env },
      ),
      e2e.runInProcess(
        [
          '--tool_name',
          'sandboxed_shell',
          '--sandbox-scope',
          scope.dir,
          '--tool_args',
          JSON.stringify({ command: `echo x > ${outside}/x` }),
        ],
        { cwd: scope.dir, env: scope.env },
      ),
    ]);
    expect(inScope).toMatchObject({ code: 0, stdout: `${scope.dir}\n` });
    expect(escape.code).toBe(1);
    expect(escape.stdout).toContain('Permission denied');
  });

  it('R9: words after -- fill the positionals of a definition tool', async ({ e2e }) => {
    const scope = await e2e.scope();
    const options = { cwd: scope.dir, env: scope.env };
    const [result, both] = await Promise.all([
      e2e.runInProcess(['--tool_name', 'argv', '--', 'word1', 'word2', '$(id)'], options),
      e2e.runInProcess(['--tool_name', 'argv', '--tool_args', '{"text":"t"}', '--', 'w'], options),
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(['word1', 'word2', '$(id)']);
    expect(JSON.parse(both.stdout)).toEqual(['--text', 't', 'w']);
  });

  it('R9: a word after -- that is not a valid number for a number positional exits 2 with a usage message, not a stack trace', async ({
    e2e,
  }) => {
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
      e2e.runInProcess(['--tool_name', 'count', '--tools-dir', tools, '--', ...words], {
        cwd: scope.dir,
        env: scope.env,
      });
    const [bad, badItem, good] = await Promise.all([
      run(['abc']),
      run(['3', '0.5', 'half']),
      run(['3', '0.5', '2']),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('argument "times" must be an integer');
    expect(bad.stderr).not.toMatch(/SyntaxError|\n\s+at /);
    expect(badItem.code).toBe(2);
    expect(badItem.stderr).toContain('argument "ratios/1" must be a number');
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toEqual(['3', '0.5', '2']);
  });

  it('R8.9: a built-in that answers without running a command prints its answer and exits 0', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const options = { cwd: scope.dir, env: scope.env };
    const [status, bundles] = await Promise.all([
      e2e.runInProcess(['--tool_name', 'status'], options),
      e2e.runInProcess(['--tool_name', 'activate_tools'], options),
    ]);
    expect(status).toMatchObject({ code: 0, stdout: 'status: no operations.\n' });
    expect(bundles.code).toBe(0);
    expect(bundles.stdout).toContain('git');
  });

  it('R9: words after -- form the sandboxed_shell command', async ({ e2e }) => {
    const scope = await e2e.scope();
    const result = await e2e.runInProcess(
      ['--tool_name', 'sandboxed_shell', '--', 'echo', 'hello'],
      {
        cwd: scope.dir,
        env: scope.env,
      },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'hello\n' });
  });

  it('R8.9: invalid --tool_args JSON exits 2 with a message and runs nothing', async ({ e2e }) => {
    const scope = await e2e.scope();
    const options = { cwd: scope.dir, env: scope.env };
    const [bad, notObject] = await Promise.all([
      e2e.runInProcess(
        ['--tool_name', 'sandboxed_shell', '--tool_args', '{"command": "touch ran.txt"'],
        options,
      ),
      e2e.runInProcess(
        ['--tool_name', 'sandboxed_shell', '--tool_args', '["touch ran.txt"]'],
        options,
      ),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('--tool_args is not valid JSON');
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('--tool_args must be a JSON object');
  });

  it('R8.9: an unknown tool, bad arguments or a path outside the scope exit 2 with the reason on stderr', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const options = { cwd: scope.dir, env: scope.env };
    const [unknown, badArgs, outside, withoutTool] = await Promise.all([
      e2e.runInProcess(['--tool_name', 'no_such_tool'], options),
      e2e.runInProcess(['--tool_name', 'e2e_sync', '--tool_args', '{"value":1}'], options),
      e2e.runInProcess(['--tool_name', 'files_show', '--', '/etc/passwd'], options),
      e2e.runInProcess(['--tool_args', '{}'], options),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no tool "no_such_tool"');
    expect(unknown.stderr).toContain('sandboxed_shell');
    expect(badArgs.code).toBe(2);
    expect(badArgs.stderr).toContain('"value"');
    expect(outside.code).toBe(2);
    expect(outside.stdout).toBe('');
    expect(outside.stderr).toContain('outside the sandbox scope');
    expect(withoutTool.code).toBe(2);
    expect(withoutTool.stderr).toContain('--tool_args needs --tool_name');
  });

  it('R8.9: a one-shot command that times out exits 124', async ({ e2e }) => {
    const scope = await e2e.scope();
    const result = await e2e.runInProcess(['--tool_name', 'slow'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result.code).toBe(124);
  });

  it('R8.9: a synchronous definition tool exits with its own code and prints only its output', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const result = await e2e.runInProcess(['--tool_name', 'fails'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result).toMatchObject({ code: 4, stdout: 'boom\nbang\nbye\n', stderr: '' });
  });
});

describe.concurrent(
  'SPEC §2 compat: a parameter named like an Object.prototype member',
  { timeout: 60_000 },
  () => {
    it('SPEC §2 compat: a tool with an option "constructor" is callable with and without it (one-shot CLI)', async ({
      e2e,
    }) => {
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
        e2e.runInProcess(
          [
            '--sandbox-scope',
            scope.dir,
            '--tool_name',
            'proto',
            '--tool_args',
            JSON.stringify(args),
          ],
          { cwd: scope.dir, env: scope.env },
        );
      const [without, given] = await Promise.all([call({}), call({ constructor: 'x' })]);
      expect(without.code, without.stderr).toBe(0);
      expect(without.stdout).toBe('\n');
      expect(given.code, given.stderr).toBe(0);
      expect(given.stdout).toBe('--constructor x\n');
    });
  },
);
