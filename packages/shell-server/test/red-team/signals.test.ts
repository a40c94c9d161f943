// Red team, signals, ptrace and domains (R7.6 "each command in its own nested Landlock domain, so
// operations cannot signal or ptrace each other, the zygote or the supervisors"; "timeouts and
// cancel hold even when the pool's processes are stopped or killed by a command"; SPEC §3 "no
// orphan survives an operation"). The pool's zygote is `ahma-sandbox … --pool N`, the server's
// child; a command's supervisor is its ancestor whose parent is the zygote. Each test has a server
// of its own, so a successful attack cannot spill into the next test; whatever an attack stopped
// is resumed by the test before it waits on anything. The servers wait less at each step of
// stopping a command (SHORT_STOP_WAITS), but for one describe that keeps the defaults.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  aliveAndRunning,
  blockedWith,
  confined,
  descendantsOf,
  eachIdentity,
  fileState,
  processes,
  processInfo,
  quote,
  redTeamFile,
  SHORT_STOP_WAITS,
  signal,
  sleep,
  type Seat,
  type Server,
  verdictLine,
  verdicts,
  waitFor,
} from './harness.js';

const file = redTeamFile(['signal', 'ptrace', 'daemon']);

/** Another operation, running until the test releases it, and its processes. */
interface Bystander {
  readonly id: string;
  /** The shell loop it runs (renamed to a marker) and the shell waiting for it. */
  readonly sleeper: number;
  readonly shell: number;
  /** Lets it end (on its own, as a command that finished): after the attack, before the wait. */
  release(): Promise<void>;
}

async function bystander(server: Server, seat: Seat): Promise<Bystander> {
  const marker = `ahma-redteam-${randomBytes(5).toString('hex')}`;
  // It waits for a file rather than a fixed time: alive for as long as the attack takes, however
  // busy the machine, and not a moment longer.
  const released = `${seat.scope}/${marker}.released`;
  const loop = `until [ -e ${quote(released)} ]; do sleep 0.05; done`;
  const id = await server.start(`( exec -a ${marker} sh -c ${quote(loop)} ); echo survived`, {
    timeout_seconds: 60,
    concurrency: 'service', // it runs beside the attack, which takes the workspace's lane
  });
  const sleeper = await waitFor(
    async () => (await processes()).find((info) => info.cmdline.startsWith(marker)),
    'the other operation',
  );
  return {
    id,
    sleeper: sleeper.pid,
    shell: sleeper.ppid,
    release: () => writeFile(released, ''),
  };
}

/**
 * Runs an attack and watches the server's process tree from outside until it ends: which
 * processes were seen stopped (state T), named by `labels` where known; then resumes them all, so
 * the attack's own result can come back even when it stopped its supervisor or the zygote.
 */
async function watchAttack(
  server: Server,
  command: string,
  labels: Record<string, number>,
): Promise<{ output: string; stopped: string[] }> {
  const id = await server.start(command, { timeout_seconds: 20 });
  const names = new Map(Object.entries(labels).map(([label, pid]) => [pid, label]));
  const stopped = new Set<string>();
  const deadline = Date.now() + 3000;
  let finished = false;
  while (!finished && Date.now() < deadline) {
    for (const info of await descendantsOf(server.pid)) {
      if (info.state === 'T') {
        stopped.add(
          names.get(info.pid) ?? `pid ${String(info.pid)} (${info.cmdline.slice(0, 40)}…)`,
        );
      }
    }
    const status = await server.call('status', { ids: [id] });
    finished = JSON.stringify(status.structuredContent).includes('"exit_code"');
    await sleep(20);
  }
  for (const info of await descendantsOf(server.pid)) signal(info.pid, 'SIGCONT');
  const result = await server.wait(id, 10);
  return { output: result?.output ?? '(the attack did not finish)', stopped: [...stopped] };
}

/**
 * Whether the daemon's process is gone within 1.3 s of its call's end (it would create its marker
 * 0.8 s after it started): a gone process can create nothing later, so the wait ends as soon as it
 * is gone. One still there is killed, so that it cannot outlive the test either.
 */
async function daemonGone(pid: number): Promise<boolean> {
  const gone = await waitFor(
    async () => (await processInfo(pid)) === undefined,
    `the daemon (pid ${String(pid)}) to be gone`,
    1300,
  ).catch(() => false);
  if (!gone) signal(pid, 'SIGKILL');
  return gone;
}

const tracerOf = async (pid: number) =>
  /^TracerPid:\s*(\d+)/m.exec(await readFile(`/proc/${String(pid)}/status`, 'utf8'))?.[1];

eachIdentity('as $name', (identity) => {
  const { seat, server: current } = confined(file, identity, {
    perTest: true,
    env: SHORT_STOP_WAITS,
  });

  it('R7.6: a command cannot SIGSTOP the zygote, its own supervisor or another operation', async ({
    expect,
  }) => {
    const server = current();
    const zygote = await server.zygote();
    const other = await bystander(server, seat());
    const targets = { zygote, other: other.sleeper, 'other-shell': other.shell };
    const attack = await watchAttack(
      server,
      seat().x(
        'signal',
        'STOP',
        'supervisor=0',
        ...Object.entries(targets).map(([label, pid]) => `${label}=${String(pid)}`),
        '--zygote',
        zygote,
      ),
      targets,
    );
    for (const label of ['supervisor', ...Object.keys(targets)]) {
      expect
        .soft(verdictLine(attack.output, `STOP-${label}`))
        .toMatch(blockedWith(`STOP-${label}`, ['EPERM']));
    }
    expect(attack.stopped).toEqual([]);
    await other.release();
    const finished = await server.wait(other.id, 15);
    expect(finished).toMatchObject({ status: 'completed', output: 'survived\n' });
  }, 60_000);

  it('R7.6: a command cannot SIGKILL the zygote, its own supervisor or another operation', async ({
    expect,
  }) => {
    const server = current();
    const zygote = await server.zygote();
    const other = await bystander(server, seat());
    const result = await server.sh(
      seat().x(
        'signal',
        'KILL',
        `zygote=${String(zygote)}`,
        'supervisor=0',
        `other=${String(other.sleeper)}`,
        `other-shell=${String(other.shell)}`,
        '--zygote',
        zygote,
      ),
      { timeout_seconds: 20 },
    );
    for (const label of ['zygote', 'supervisor', 'other', 'other-shell']) {
      expect
        .soft(verdictLine(result.output, `KILL-${label}`))
        .toMatch(blockedWith(`KILL-${label}`, ['EPERM']));
    }
    expect(await aliveAndRunning(zygote)).toBe(true);
    await other.release();
    const finished = await server.wait(other.id, 15);
    expect(finished).toMatchObject({ status: 'completed', output: 'survived\n' });
  }, 60_000);

  it('R7.6: after a command attacked the zygote, a later call runs, cancel works and timeouts fire', async () => {
    const server = current();
    const zygote = await server.zygote();
    // The attack is left in place: no resume by the test this time.
    await server
      .start(seat().x('signal', 'STOP', `zygote=${String(zygote)}`), { timeout_seconds: 5 })
      .catch(() => undefined);
    await sleep(300);
    try {
      const later = await server.start('echo still-here', { timeout_seconds: 10 });
      expect(await server.wait(later, 6)).toMatchObject({
        status: 'completed',
        output: 'still-here\n',
      });
      const cancelled = await server.start('sleep 30', { timeout_seconds: 60 });
      await server.cancel(cancelled);
      expect(await server.wait(cancelled, 6)).toMatchObject({ status: 'cancelled' });
      const timed = await server.start('sleep 30', { timeout_seconds: 1 });
      expect(await server.wait(timed, 6)).toMatchObject({ status: 'timed_out' });
    } finally {
      signal(zygote, 'SIGCONT');
    }
  }, 60_000);

  it('R7.6: PTRACE_ATTACH and /proc/<pid>/mem of the node server, the zygote and another operation are denied', async ({
    expect,
  }) => {
    const server = current();
    const zygote = await server.zygote();
    const other = await bystander(server, seat());
    const targets = { node: server.pid, zygote, other: other.sleeper };
    const result = await server.sh(
      seat().x(
        'ptrace',
        ...Object.entries(targets).map(([label, pid]) => `${label}=${String(pid)}`),
      ),
    );
    for (const label of Object.keys(targets)) {
      expect
        .soft(verdictLine(result.output, `ptrace-${label}`))
        .toMatch(blockedWith(`ptrace-${label}`, ['EPERM']));
      expect
        .soft(verdictLine(result.output, `mem-${label}`))
        .toMatch(blockedWith(`mem-${label}`, ['EACCES', 'EPERM']));
    }
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
    for (const pid of Object.values(targets)) {
      expect(await tracerOf(pid)).toBe('0');
      expect(await aliveAndRunning(pid)).toBe(true);
    }
    await other.release();
    expect(await server.wait(other.id, 15)).toMatchObject({ status: 'completed' });
  }, 60_000);

  it('SPEC §3, R7.6: a setsid daemon started by a command does not outlive its call', async () => {
    const server = current();
    const marker = join(seat().scope, 'daemon-outlived.txt');
    const result = await server.sh(seat().x('daemon', marker, 800));
    const pid = Number(/^daemon: info: pid (\d+)/m.exec(result.output)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(await daemonGone(pid)).toBe(true);
    expect(await fileState(marker)).toBeUndefined();
  }, 60_000);

  it('R7.6: a daemon that SIGKILLs its supervisor first still does not outlive its call', async ({
    expect,
  }) => {
    const server = current();
    const zygote = await server.zygote();
    const marker = join(seat().scope, 'daemon-outlived-supervisor.txt');
    const result = await server.sh(seat().x('daemon', marker, 800, '--kill-supervisor', zygote), {
      timeout_seconds: 10,
    });
    expect
      .soft(verdictLine(result.output, 'kill-supervisor'))
      .toMatch(blockedWith('kill-supervisor', ['EPERM']));
    const pid = Number(/^daemon: info: pid (\d+)/m.exec(result.output)?.[1]);
    // Without its pid (its line lost), only the marker can tell: wait past the daemon's delay.
    if (pid > 0) expect(await daemonGone(pid)).toBe(true);
    else await sleep(1300);
    expect(await fileState(marker)).toBeUndefined();
  }, 60_000);
});

// The stop waits a user gets (grace, backstop, watchdog at their defaults): what a stopped command
// costs, end to end, without the shortened waits of the tests above.
eachIdentity('as $name, at the default stop waits', (identity) => {
  const { server: current } = confined(file, identity, { perTest: true });

  it('R7.6: a command that stops itself or its supervisor still times out, and can be cancelled', async () => {
    const server = current();
    const stopsItself = await server.start('kill -STOP $$; echo never', { timeout_seconds: 1 });
    const stopsSupervisor = await server.start('kill -STOP $PPID; sleep 30', {
      timeout_seconds: 1,
    });
    const cancelled = await server.start('kill -STOP $$; echo never', { timeout_seconds: 60 });
    await sleep(200);
    await server.cancel(cancelled);
    expect(await server.wait(stopsItself, 10)).toMatchObject({ status: 'timed_out' });
    expect(await server.wait(stopsSupervisor, 10)).toMatchObject({ status: 'timed_out' });
    expect(await server.wait(cancelled, 10)).toMatchObject({ status: 'cancelled' });
  }, 60_000);
});
