// The supervision of a session's process (isolation/child.ts), with stand-in programs: lines both
// ways, the reason it gives when it dies, and a stop that leaves nothing behind even when the
// process ignores SIGTERM (R8D.10).
import { afterEach, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/options.js';
import { SessionChild, type ChildExit } from '../../src/isolation/child.js';
import { isolatedChildCommand } from '../../src/isolation/child-command.js';
import { E2E, childEnv, descendantsOf, processInfo, waitFor } from '../support/harness.js';

const e2e = new E2E();
const children: SessionChild[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.stop(100)));
  await e2e.cleanup();
});

function start(
  script: string,
  scope: string,
  env: Record<string, string> = {},
  unsetEnv: readonly string[] = [],
) {
  const lines: string[] = [];
  const stderr: string[] = [];
  let exit: ChildExit | undefined;
  const child = new SessionChild({
    command: { file: 'bash', args: ['-c', script, 'session-child'], unsetEnv },
    scope,
    env: childEnv(env),
    onLine: (line) => lines.push(line),
    onStderrLine: (line) => stderr.push(line),
    onExit: (value) => (exit = value),
  });
  children.push(child);
  return { child, lines, stderr, exit: () => exit };
}

function pidOf(child: SessionChild): number {
  if (child.pid === undefined) throw new Error('not started');
  return child.pid;
}

async function live(pids: readonly number[]): Promise<number[]> {
  const infos = await Promise.all(pids.map((pid) => processInfo(pid)));
  return infos.flatMap((info) => (info === undefined || info.state === 'Z' ? [] : [info.pid]));
}

describe('SessionChild', () => {
  it('R8D.3: starts the program in the scope with --sandbox-scope appended, in its own session, and carries lines both ways', async () => {
    const scope = await e2e.outsideDir();
    const s = start('echo "$PWD $*"; while read -r line; do echo "got $line"; done', scope);
    await waitFor(() => s.lines.length > 0, 'the first line');
    expect(s.lines[0]).toBe(`${scope} --sandbox-scope ${scope}`);
    const info = await processInfo(pidOf(s.child));
    expect(info?.session).toBe(s.child.pid);
    expect(info?.pgrp).toBe(s.child.pid);
    expect(s.child.write('{"a":1}')).toBe(true);
    await waitFor(() => s.lines.length > 1, 'the echo');
    expect(s.lines[1]).toBe('got {"a":1}');
  });

  it("R7.9: the process gets the server's environment without the HTTP server's secrets", async () => {
    const scope = await e2e.outsideDir();
    const s = start('cat /proc/self/environ | tr "\\0" "\\n"; echo END', scope, {
      AHMA_HTTP_TOKEN: 'tok-secret',
      AHMA_HTTP_TOKEN_FILE: '/srv/token',
      AHMA_OAUTH_CLIENT_SECRET: 'oauth-secret',
      ORDINARY: 'ordinary-value',
    });
    await waitFor(() => s.lines.includes('END'), 'the environment');
    expect(s.lines).toContain('ORDINARY=ordinary-value');
    // Only the HTTP server's own are removed here; the child's runtime keeps the rest from commands.
    expect(s.lines).toContain('AHMA_OAUTH_CLIENT_SECRET=oauth-secret');
    expect(s.lines.filter((line) => line.startsWith('AHMA_HTTP_TOKEN'))).toEqual([]);
  });

  it("R8D.3, R7.9: the server's flag variables are not inherited: a flag given its default over a wider variable stays default in the session", async () => {
    const scope = await e2e.outsideDir();
    const env = { AHMA_ALLOW_WRITE: '/srv/wide', AHMA_NETWORK: 'host', AHMA_TOOLS_DIR: 'tools' };
    const parsed = parseCommandLine(['--mode', 'http', '--allow-write', ''], env);
    if (parsed.kind !== 'run') throw new Error(`not parsed: ${parsed.kind}`);
    expect(parsed.options.allowWrite).toEqual([]);
    const command = isolatedChildCommand(parsed.options, scope);
    expect(command.args).not.toContain('--allow-write');
    const s = start(
      'cat /proc/self/environ | tr "\\0" "\\n"; echo END',
      scope,
      env,
      command.unsetEnv,
    );
    await waitFor(() => s.lines.includes('END'), 'the environment');
    expect(s.lines.filter((line) => /^AHMA_(ALLOW_WRITE|NETWORK)=/.test(line))).toEqual([]);
    // Core reads this one itself, and a relative tools dir is the session's scope's.
    expect(s.lines).toContain('AHMA_TOOLS_DIR=tools');
  });

  it('R8.5: an exit is reported once with its code and the last `ahma-shell:` line of stderr', async () => {
    const scope = await e2e.outsideDir();
    const s = start('echo "ahma-shell: refused: why" >&2; echo "  detail" >&2; exit 3', scope);
    await waitFor(() => s.exit(), 'the exit');
    expect(s.exit()).toEqual({ code: 3, signal: null });
    expect(s.child.lastWords()).toBe('ahma-shell: refused: why');
    expect(s.stderr).toEqual(['ahma-shell: refused: why', '  detail']);
    expect(s.child.write('late')).toBe(false);
  });

  it('R8D.10: stop() ends a process that ignores SIGTERM and everything below it, also what left its process group', async () => {
    const scope = await e2e.outsideDir();
    const s = start(
      "trap '' TERM; sleep 300 & setsid sleep 301 & echo ready; while :; do sleep 1; done",
      scope,
    );
    await waitFor(() => s.lines.includes('ready'), 'the children');
    const pid = pidOf(s.child);
    await waitFor(async () => (await descendantsOf(pid)).length >= 3, 'the grandchildren');
    const tree = [pid, ...(await descendantsOf(pid)).map((info) => info.pid)];
    const started = Date.now();
    await s.child.stop(200);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await live(tree)).toEqual([]);
    expect(s.exit()?.signal).toBe('SIGKILL');
  });

  it('R8D.10: stop() of a process that exits on SIGTERM is graceful', async () => {
    const scope = await e2e.outsideDir();
    const s = start(
      "trap 'echo bye; exit 0' TERM; echo ready; while :; do sleep 0.05; done",
      scope,
    );
    await waitFor(() => s.lines.includes('ready'), 'the start');
    await s.child.stop(5000);
    expect(s.lines).toContain('bye');
    expect(s.exit()).toEqual({ code: 0, signal: null });
  });
});
