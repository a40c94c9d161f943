// The pool zygote of the Linux sandbox helper (`ahma-sandbox --pool N --`, native/ahma-sandbox.c),
// run for real against the kernel: its usage, and how a command requested over its wire protocol
// runs and is answered (R4.1): S with the supervisor's pid, the output in O frames, then X; exit
// codes; argv words and scripts that arrive verbatim; large output in bounded frames, and
// backpressure; malformed requests answered with E; environment entries (`=NAME=VALUE` fields
// after cwd) set for one command. The driver is ../support/zygote.ts.
import { spawn } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helper, pidsWithMarker, sleep, waitFor } from '../support/sandbox-helper.js';
import {
  runPayload,
  pool,
  newMarker,
  scope,
  useZygoteTests,
  warmShellUnits,
  Zygote,
} from '../support/zygote.js';

/** A run payload with environment fields: cwd, `=NAME=VALUE`..., mode, words; each NUL-ended. */
const envPayload = (
  cwd: string,
  env: Readonly<Record<string, string>>,
  mode: string,
  words: readonly string[],
) =>
  Buffer.concat(
    [cwd, ...Object.entries(env).map(([name, value]) => `=${name}=${value}`), mode, ...words].map(
      (field) => Buffer.from(`${field}\0`, 'utf8'),
    ),
  );

/** Values a shell would mangle if it evaluated them. */
const hostileEnv = (dir: string) => ({
  SPACES: 'two  words ',
  LINES: 'line1\nline2\n',
  SUBST: `$(touch ${dir}/pwned)`,
  TICKS: `\`touch ${dir}/pwned2\``,
  QUOTES: `it's "quoted" \\ $HOME`,
  EQUALS: 'a=b==c',
  EMPTY: '',
  UNICODE: 'ünïcødé ✓',
});

/** Python printing the named variables as JSON (null for unset ones). */
const dumpEnv = (names: readonly string[]) => [
  'python3',
  '-c',
  'import json, os, sys; print(json.dumps({n: os.environ.get(n) for n in sys.argv[1:]}))',
  ...names,
];

describe.runIf(process.platform === 'linux')('ahma-sandbox --pool (zygote)', () => {
  useZygoteTests();

  describe('usage', () => {
    it('R4.1: --pool must be 1..64 and takes no command; --shell needs --pool', async () => {
      const usage = (args: readonly string[]) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(helper, args, { stdio: ['ignore', 'pipe', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (code) => resolve({ code, stderr }));
        });
      for (const size of ['0', '65', 'x']) {
        const result = await usage(['--read-all', '--rw', scope, '--pool', size, '--']);
        expect(result.code).toBe(125);
        expect(result.stderr).toContain('--pool needs a number of warm shells (1..64)');
      }
      const withCommand = await usage(['--read-all', '--rw', scope, '--pool', '2', '--', 'true']);
      expect(withCommand).toMatchObject({ code: 125 });
      expect(withCommand.stderr).toContain('--pool takes no command');
      expect((await usage(['--shell', '/bin/bash', '--', 'true'])).code).toBe(125);
    });
  });

  describe('running commands', () => {
    it('R4.1: an argv command answers S with the supervisor pid, then its output, then X with exit code 0', async () => {
      const zygote = pool(2);
      const result = await zygote.run('argv', ['printf', '%s|%s\\n', 'a', 'b']);
      expect(result).toMatchObject({ output: 'a|b\n', code: 0, signal: 0 });
      expect(result.pid).toBeGreaterThan(0);
      expect(result.types[0]).toBe('S');
      expect(result.types.at(-1)).toBe('X');
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: shell mode runs a script with pipes and redirects in the requested directory', async () => {
      const zygote = pool(2);
      const result = await zygote.run('shell', [
        'echo hello | tr a-z A-Z > out.txt && cat < out.txt && wc -l < out.txt && pwd',
      ]);
      expect(result).toMatchObject({ output: `HELLO\n1\n${scope}\n`, code: 0 });
      expect(await readFile(join(scope, 'out.txt'), 'utf8')).toBe('HELLO\n');
    });

    it('R4.1: stderr is merged into the output in chronological order', async () => {
      const zygote = pool(1);
      const result = await zygote.run('shell', ['echo a; echo b >&2; echo c; ls /nonexistent-x']);
      expect(result.output).toMatch(/^a\nb\nc\nls: cannot access '\/nonexistent-x'.*\n$/);
      expect(result.code).toBe(2);
    });

    it('R4.1: exit codes pass through; a command killed by a signal reports code -1 and the signal', async () => {
      const zygote = pool(2);
      expect(await zygote.run('shell', ['exit 3'])).toMatchObject({ code: 3, signal: 0 });
      expect(await zygote.run('argv', ['false'])).toMatchObject({ code: 1, signal: 0 });
      expect(await zygote.run('shell', ['echo before; kill -9 $$'])).toMatchObject({
        output: 'before\n',
        code: -1,
        signal: 9,
      });
    });

    it('R4.1: a missing command exits 127, a missing working directory 125', async () => {
      const zygote = pool(1);
      const missing = await zygote.run('argv', ['/nonexistent/ahma-no-such-command']);
      expect(missing.code).toBe(127);
      expect(missing.output).toContain('/nonexistent/ahma-no-such-command');
      const noDir = await zygote.run('argv', ['true'], join(scope, 'missing-dir'));
      expect(noDir.code).toBe(125);
      expect(noDir.output).toContain('No such file or directory');
    });

    it('R4.1: argv mode reports like the one-command mode: 127 not found, 126 not executable, 125 missing cwd', async () => {
      const zygote = pool(1);
      const direct = (args: readonly string[]) =>
        new Promise<{ output: string; code: number | null }>((resolve) => {
          const child = spawn(helper, ['--read-all', '--rw', scope, '--', ...args], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.on('close', (code) => resolve({ output, code }));
        });

      const missing = '/nonexistent/ahma-no-such-command';
      const notFound = await zygote.run('argv', [missing, 'arg']);
      expect(notFound).toMatchObject({
        output: `ahma-sandbox: cannot run ${missing}: No such file or directory\n`,
        code: 127,
        signal: 0,
      });
      expect(await direct([missing, 'arg'])).toEqual({ output: notFound.output, code: 127 });
      const bare = await zygote.run('argv', ['ahma-no-such-command-on-path']);
      expect(bare).toMatchObject({
        output:
          'ahma-sandbox: cannot run ahma-no-such-command-on-path: No such file or directory\n',
        code: 127,
      });

      const notExecutable = join(scope, 'not-executable');
      await writeFile(notExecutable, 'echo never\n', { mode: 0o644 });
      const denied = await zygote.run('argv', [notExecutable]);
      expect(denied).toMatchObject({
        output: `ahma-sandbox: cannot run ${notExecutable}: Permission denied\n`,
        code: 126,
      });
      expect(await direct([notExecutable])).toEqual({ output: denied.output, code: 126 });

      const missingDir = join(scope, 'missing dir');
      expect(await zygote.run('argv', ['true'], missingDir)).toMatchObject({
        output: `ahma-sandbox: cannot change to ${missingDir}: No such file or directory\n`,
        code: 125,
        signal: 0,
      });
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: argv words reach the program itself, a direct child of its supervisor, one word each', async () => {
      const zygote = pool(1);
      const words = ['two words', `it's "quoted"`, '$(id)', '`id`', 'a\nb\n', '', '*', '--', '-e'];
      const script =
        'import json, os, sys; print(json.dumps({"argv": sys.argv[1:], "ppid": os.getppid(), "cwd": os.getcwd()}))';
      const cwd = join(scope, 'sub $(id) dir');
      await mkdir(cwd);
      const result = await zygote.run('argv', ['python3', '-c', script, ...words], cwd);
      expect(result.code).toBe(0);
      // No shell in between: the command's parent is the unit's supervisor (the pid in S).
      expect(JSON.parse(result.output)).toEqual({ argv: words, ppid: result.pid, cwd });
    });

    it('R4.1: no state leaks between commands: cd, variables, exit and background jobs stay in the first', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      const first = await zygote.run('shell', [
        `cd /; export AHMA_LEAK=exported; AHMA_LOCAL=local; (exec -a ${marker} sleep 100) & exit 7`,
      ]);
      expect(first).toMatchObject({ code: 7, signal: 0 });
      expect(pidsWithMarker(marker)).toEqual([]); // the background job went with its unit
      const second = await zygote.run('shell', [
        'printf "%s|%s|%s|%s\\n" "$PWD" "${AHMA_LEAK-unset}" "${AHMA_LOCAL-unset}" "$(jobs | wc -l)"',
      ]);
      expect(second).toMatchObject({ output: `${scope}|unset|unset|0\n`, code: 0 });
      expect(second.pid).not.toBe(first.pid);
      const bootstrapVariables = await zygote.run('shell', ['compgen -v __ahma_ || echo none']);
      expect(bootstrapVariables.output).toBe('none\n');
    });

    it('R4.1: argv words arrive verbatim, exactly one word each (spaces, quotes, $(id), globs, newlines, empty)', async () => {
      const zygote = pool(2);
      const words = [
        'two words',
        `it's "quoted"`,
        '$(id)',
        '`id`',
        '*',
        'line1\nline2\n',
        '',
        '-c',
        '\\back\\slash',
        '$HOME ${PATH}',
        '; rm -rf / #',
        'ünïcødé ✓',
      ];
      const cwd = join(scope, `dir with 'quotes' "and" $(id) \\ and\nnewline`);
      await mkdir(cwd);
      const script = 'import json, os, sys; print(json.dumps([os.getcwd()] + sys.argv[1:]))';
      const result = await zygote.run('argv', ['python3', '-c', script, ...words], cwd);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.output)).toEqual([cwd, ...words]);
    });

    it('R4.1: a shell script arrives verbatim too: quotes, newlines and $(...) are the script text', async () => {
      const zygote = pool(1);
      const script = `x='single "double" $(not run)'\nprintf '%s\\n' "$x" "$(echo sub)"`;
      const result = await zygote.run('shell', [script]);
      expect(result).toMatchObject({ output: 'single "double" $(not run)\nsub\n', code: 0 });
    });

    it('R4.1: a large shell script (256 KiB) and arbitrary non-NUL bytes arrive complete', async () => {
      const zygote = pool(1);
      const filler = Array.from({ length: 4096 }, (_, i) => `: ${String(i).padStart(70, '.')}`);
      const large = `${filler.join('\n')}\necho "end $((6 * 7))"`;
      expect(large.length).toBeGreaterThan(256 * 1024);
      expect(await zygote.run('shell', [large])).toMatchObject({ output: 'end 42\n', code: 0 });

      // Bytes that are not UTF-8, control characters, a lone \r: the script sees them as sent.
      const bytes = Buffer.from([0xff, 0xfe, 0x01, 0x80, 0x0d, 0x7f, 0xc3, 0xa9]);
      const id = 77;
      zygote.send(
        'R',
        id,
        Buffer.concat([
          Buffer.from(`${scope}\0shell\0printf '%s' '`),
          bytes,
          Buffer.from("' | od -An -tx1 | tr -s ' \\n' ' '\0"),
        ]),
      );
      const raw = await zygote.result(id);
      expect(raw).toMatchObject({ output: ' ff fe 01 80 0d 7f c3 a9 ', code: 0 });
    });

    it('R4.1: large output arrives complete, in order, in frames of at most 64 KiB, before X', async () => {
      const zygote = pool(1);
      const id = zygote.start('argv', ['seq', '1', '300000']);
      const result = await zygote.result(id);
      const expected = `${Array.from({ length: 300_000 }, (_, i) => i + 1).join('\n')}\n`;
      expect(result.code).toBe(0);
      expect(result.output.length).toBe(expected.length);
      expect(result.output === expected).toBe(true);
      const sizes = zygote.frames.filter((f) => f.id === id && f.type === 'O');
      expect(Math.max(...sizes.map((f) => f.payload.length))).toBeLessThanOrEqual(65_536);
      expect(result.types.indexOf('X')).toBe(result.types.length - 1);
    });

    it('R4.1: backpressure: while the server does not read, the zygote waits; then all output and X arrive', async () => {
      // The command finishes (and its supervisor exits) while the zygote is blocked writing a
      // frame: the exit must still be noticed once the server reads again.
      const zygote = pool(1);
      for (const size of [200_000, 250_000, 300_000]) {
        zygote.child.stdout?.pause();
        const id = zygote.start('shell', [`head -c ${size} /dev/zero | tr '\\0' x`]);
        await sleep(300);
        zygote.child.stdout?.resume();
        const result = await zygote.result(id);
        expect(result).toMatchObject({ code: 0, signal: 0 });
        expect(result.output).toBe('x'.repeat(size));
      }
    });
  });

  describe('environment entries', () => {
    it('R4.1: =NAME=VALUE fields after cwd reach an argv unit and a shell unit verbatim, never evaluated; no field works as before', async () => {
      const zygote = pool(1);
      const env = hostileEnv(scope);
      const names = Object.keys(env);
      let id = 1000; // above the ids zygote.run() takes
      const run = (
        mode: string,
        words: readonly string[],
        fields: Readonly<Record<string, string>> = env,
      ) => {
        zygote.send('R', ++id, envPayload(scope, fields, mode, words));
        return zygote.result(id);
      };
      const argv = await run('argv', dumpEnv(names));
      expect(argv.code).toBe(0);
      expect(JSON.parse(argv.output)).toEqual(env);
      // The shell sees them as variables, exported to what it starts.
      const shell = await run('shell', [
        `printf '[%s]' "$SPACES" "$EMPTY"; echo; exec ${dumpEnv(names)
          .map((w) => `'${w}'`)
          .join(' ')}`,
      ]);
      expect(shell.code).toBe(0);
      const [first = '', json = ''] = shell.output.split('\n');
      expect(first).toBe('[two  words ][]');
      expect(JSON.parse(json)).toEqual(env);
      expect(existsSync(join(scope, 'pwned'))).toBe(false);
      expect(existsSync(join(scope, 'pwned2'))).toBe(false);
      // Without fields, nothing of the above is set; with one, only it.
      const without = await zygote.run('shell', [
        'echo "${SPACES-unset}"; compgen -v __ahma_ || echo none',
      ]);
      expect(without.output).toBe('unset\nnone\n');
      const one = await run('shell', ['echo "$ONLY ${SPACES-unset}"'], { ONLY: 'me' });
      expect(one.output).toBe('me unset\n');
      // A word after the mode that looks like a field is a word.
      const word = await run('argv', ['printf', '%s\\n', '=X=y'], {});
      expect(word.output).toBe('=X=y\n');
    });

    it('R4.1: a bash of its own (no template) exports the entries the same way', async () => {
      const dir = await mkdtemp('/var/tmp/ahma-zyg-bin-');
      try {
        const lone = join(dir, 'ahma-sandbox');
        await copyFile(helper, lone);
        await chmod(lone, 0o755);
        const zygote = new Zygote(['--read-all', '--rw', scope, '--pool', '1', '--'], lone);
        await waitFor(() => warmShellUnits(zygote.pid).length === 1, 'a warm shell');
        const env = hostileEnv(scope);
        zygote.send(
          'R',
          1,
          envPayload(scope, env, 'shell', [
            `exec ${dumpEnv(Object.keys(env))
              .map((w) => `'${w}'`)
              .join(' ')}`,
          ]),
        );
        const result = await zygote.result(1);
        expect(result.code).toBe(0);
        expect(JSON.parse(result.output)).toEqual(env);
        expect(existsSync(join(scope, 'pwned'))).toBe(false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('R4.1: a malformed or reserved environment name is answered with E, and nothing runs', async () => {
      const zygote = pool(1);
      const marker = join(scope, 'ran');
      const bad = [
        ['=', 'needs =NAME=VALUE'],
        ['=NOVALUE', 'needs =NAME=VALUE'],
        ['==x', 'empty environment name'],
        ['=1A=x', '[A-Za-z_][A-Za-z0-9_]*'],
        ['=A-B=x', '[A-Za-z_][A-Za-z0-9_]*'],
        ['=A B=x', '[A-Za-z_][A-Za-z0-9_]*'],
        ['=__ahma_script=x', 'reserved'],
      ];
      let id = 500;
      for (const [field = '', message] of bad) {
        for (const mode of ['argv', 'shell']) {
          id++;
          const words = mode === 'argv' ? ['touch', marker] : [`touch ${marker}`];
          zygote.send('R', id, Buffer.from(`${scope}\0${field}\0${mode}\0${words.join('\0')}\0`));
          const error = await zygote.frame('E', id);
          expect(error.payload.toString(), field).toContain(message);
        }
      }
      // Fields but no mode, or a shell request with a second word after them.
      zygote.send('R', 600, envPayload(scope, { A: 'b' }, '', []).subarray(0, -1));
      expect((await zygote.frame('E', 600)).payload.toString()).toContain('malformed');
      zygote.send('R', 601, envPayload(scope, { A: 'b' }, 'shell', ['true', 'extra']));
      expect((await zygote.frame('E', 601)).payload.toString()).toContain('exactly one word');
      expect(zygote.frames.filter((f) => f.type === 'S' && f.id >= 500)).toEqual([]);
      expect(existsSync(marker)).toBe(false);
      expect(await zygote.run('argv', ['echo', 'still fine'])).toMatchObject({ code: 0 });
    });
  });

  describe('malformed requests', () => {
    it('R4.1: malformed or duplicate requests are answered with E; K for an unknown id is ignored', async () => {
      const zygote = pool(1);
      zygote.send('R', 900, Buffer.from('no terminating nul'));
      expect((await zygote.frame('E', 900)).payload.toString()).toContain('malformed');
      zygote.send('R', 901, runPayload(scope, 'argv', []));
      expect((await zygote.frame('E', 901)).payload.toString()).toContain('malformed');
      zygote.send('R', 902, Buffer.from(`${scope}\0bogus\0x\0`));
      expect((await zygote.frame('E', 902)).payload.toString()).toContain('argv or shell');
      zygote.send('R', 903, runPayload(scope, 'shell', ['echo a', 'echo b']));
      expect((await zygote.frame('E', 903)).payload.toString()).toContain('exactly one word');
      zygote.kill(12345, 15);
      zygote.send('Z', 904, Buffer.from('unknown type'));

      zygote.send('R', 905, runPayload(scope, 'shell', ['sleep 0.3; echo first']));
      await zygote.frame('S', 905);
      zygote.send('R', 905, runPayload(scope, 'shell', ['echo second']));
      expect((await zygote.frame('E', 905)).payload.toString()).toContain('duplicate id');
      const exit = await zygote.frame('X', 905);
      expect(exit.payload.readInt32LE(0)).toBe(0);
      const output = zygote.frames.filter((f) => f.id === 905 && f.type === 'O');
      expect(Buffer.concat(output.map((f) => f.payload)).toString()).toBe('first\n');
      expect(zygote.frames.filter((f) => f.id === 905 && f.type === 'S')).toHaveLength(1);
      expect(await zygote.run('argv', ['echo', 'still fine'])).toMatchObject({ code: 0 });
      expect(zygote.alive).toBe(true);
    });
  });
});
