// R7.6 and SPEC §4 "Resources" with the built server: full-output logs live in Ahma's private state
// directory, where no sandboxed_shell command can write; a server killed with SIGKILL leaves its
// state behind and the next server to start sweeps it; a state root commands could write is refused.
// Each test has its own scope and state root; they run at once.
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect } from 'vitest';
import { exists, it, structured, waitFor, type CommandResult } from '../support/harness.js';

const BIG_OUTPUT = 'yes state | head -c 100000';

describe.concurrent('R7.6: the private state directory', { timeout: 60_000 }, () => {
  it('R7.6: full-output logs go to the private state root, where a sandboxed command can plant nothing', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.server(scope, ['--sync']);
    const big = structured<CommandResult>(
      await server.call('sandboxed_shell', { command: BIG_OUTPUT }),
    );
    expect(big.truncated).toBe(true);
    const log = big.full_output_path ?? '';
    expect(log).toMatch(
      new RegExp(
        `^${scope.stateRoot}/servers/[^/]+/output/${big.operation_id}-[0-9a-f]{16}\\.log$`,
      ),
    );
    expect(log.startsWith(scope.tempDir)).toBe(false);
    expect(log.startsWith(scope.dir)).toBe(false);

    const outside = await e2e.outsideDir();
    const plant = await server.call('sandboxed_shell', {
      command: `ln -s ${outside}/victim ${dirname(log)}/op_next.log`,
    });
    expect(plant.isError).toBe(true);
    expect(structured<CommandResult>(plant).output).toMatch(/Permission denied/);
    expect(await readdir(dirname(log))).toEqual([log.slice(dirname(log).length + 1)]);
  });

  it('R7.6: --state-dir inside the scope is refused at start with the fix', async ({ e2e }) => {
    const scope = await e2e.scope();
    const result = await e2e.run(
      ['--mode', 'stdio', '--sandbox-scope', scope.dir, '--state-dir', join(scope.dir, 'state')],
      { cwd: scope.dir, env: scope.env },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no place for its private state');
    expect(result.stderr).toContain('inside the sandbox scope');
    expect(result.stderr).toContain('--state-dir DIR (AHMA_STATE_DIR)');
    expect(existsSync(join(scope.dir, 'state'))).toBe(false);
  });
});

describe.concurrent(
  'SPEC §4 Resources: a killed server is swept at the next start',
  { timeout: 60_000 },
  () => {
    it('SPEC §4 Resources: a server killed with SIGKILL leaves its state and cache; the next server removes them', async ({
      e2e,
    }) => {
      const scope = await e2e.scope();
      const first = await e2e.server(scope, ['--sync']);
      const big = structured<CommandResult>(
        await first.call('sandboxed_shell', {
          command: `${BIG_OUTPUT}; mkdir -p "$XDG_CACHE_HOME/t"`,
        }),
      );
      const log = big.full_output_path ?? '';
      const serverDir = dirname(dirname(log));
      const caches = join(scope.stateRoot, 'caches');
      const [cacheName] = await readdir(caches);
      const cacheDir = join(caches, cacheName ?? '');
      expect(existsSync(join(cacheDir, 'xdg', 't'))).toBe(true);

      process.kill(first.pid, 'SIGKILL');
      await waitFor(() => !exists(first.pid), 'the killed server to be gone');
      expect([existsSync(log), existsSync(cacheDir)]).toEqual([true, true]);

      const second = await e2e.server(scope);
      await waitFor(
        () => !existsSync(serverDir) && !existsSync(cacheDir),
        "the sweep of the killed server's directories",
      );
      // Only the live server's directories remain.
      expect(await readdir(join(scope.stateRoot, 'servers'))).toHaveLength(1);
      expect(await readdir(caches)).toHaveLength(1);
      expect((await second.client.listTools()).tools.length).toBeGreaterThan(0);
    });
  },
);

describe.concurrent('R7.6: file_arg files', { timeout: 60_000 }, () => {
  it('R7.6: a file_arg value is written to the private state: the command reads it there but cannot change it', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    // The program gets the file's path: it prints the path and the text, then tries to change it.
    await writeFile(
      join(scope.dir, 'note.sh'),
      'echo "$1"; cat "$1"; echo; { echo tampered >> "$1"; } 2>/dev/null && echo changed || echo refused\n',
    );
    await writeFile(
      join(scope.dir, '.ahma', 'tools', 'note.json'),
      JSON.stringify({
        name: 'note',
        description: 'Prints a note passed as a file',
        command: 'bash note.sh',
        synchronous: true,
        subcommand: [
          {
            name: 'default',
            description: 'Prints the note',
            positional_args: [
              {
                name: 'text',
                type: 'string',
                required: true,
                description: 'the note',
                file_arg: true,
              },
            ],
          },
        ],
      }),
    );
    const server = await e2e.server(scope);
    const result = structured<CommandResult>(await server.call('note', { text: 'the note' }));
    const [path, text, verdict] = result.output.split('\n');
    expect(path?.startsWith(`${scope.stateRoot}/servers/`)).toBe(true);
    expect(text).toBe('the note');
    expect(verdict).toBe('refused');
  });
});
