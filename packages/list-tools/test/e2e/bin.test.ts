// The built ahma-list-tools binary, spawned for real: argv reaches runListTools, the exit status is
// the process's, and a stdio server inherits the process's whole environment. Everything else is
// checked in-process (test/unit, test/system).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Run } from '../support/list-tools.js';
import { pagedServer } from '../support/servers.js';

const bin = fileURLToPath(new URL('../../bin/ahma-list-tools.js', import.meta.url));

/** Runs the built binary with `env`. */
function listToolsBin(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe.concurrent('the ahma-list-tools binary', () => {
  it('R6.10: lists a stdio server that inherits its environment, exit 0', async () => {
    const env = { ...process.env, AHMA_LIST_TOOLS_MARKER: 'passed-through' };
    const run = await listToolsBin(['--', process.execPath, pagedServer, 'stdio'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^server: paged-fixture 1\.2\.3\n/);
    expect(run.stdout).toContain('\nenv_marker — AHMA_LIST_TOOLS_MARKER=passed-through\n');
    expect(run.stdout.endsWith('\n5 tools\n')).toBe(true);
  });

  it('R6.10: a command that does not exist → exit 1, command not found', async () => {
    const run = await listToolsBin(['--', 'ahma-no-such-command-xyz', '--flag']);
    expect(run).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'ahma-list-tools: ahma-no-such-command-xyz --flag: cannot start it: command not found\n',
    });
  });

  it('R6.10: no server → exit 2 with the usage; --help exits 0', async () => {
    const usage = await listToolsBin([]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('no server: give -- CMD ARGS… or --http URL');
    expect(usage.stderr).toContain('\nUsage: ahma-list-tools [--format text|json]');
    const help = await listToolsBin(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ahma-list-tools /);
  });
});
