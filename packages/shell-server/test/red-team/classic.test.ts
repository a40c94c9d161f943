// Red team, classic escapes (R7.1, R7.2, R7.6): the kernel's tunables, hard links and renames
// across the scope's edge, a symlink race against the server's own path checks, abstract unix
// sockets, and another process's files reached through /proc. In each case nothing outside may
// change.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  blockedWith,
  confined,
  eachIdentity,
  fileState,
  nodeState,
  quote,
  redTeamFile,
  textOf,
  treeState,
  type Seat,
  verdictLine,
  verdicts,
} from './harness.js';
import { abstractListener } from './listener.js';

const file = redTeamFile(['open-write', 'link-rename', 'swap-race', 'unix-connect', 'proc-fd']);

/** A definition tool with a `format: "path"` argument: the server checks it, then touch uses it. */
const PATH_TOOL = {
  name: 'rt_touch',
  description: 'touch FILE, FILE being a path the server checks is inside the scope.',
  command: 'touch',
  synchronous: true,
  subcommand: [
    {
      name: 'default',
      description: 'Create or update a file.',
      positional_args: [
        { name: 'file', type: 'string', format: 'path', required: true, description: 'The file.' },
      ],
    },
  ],
};

async function prepare(seat: Seat): Promise<void> {
  const tools = await seat.mkdir(join(seat.scope, '.ahma'));
  await seat.mkdir(join(tools, 'tools'));
  await seat.write(join(tools, 'tools', 'redteam.json'), JSON.stringify(PATH_TOOL, null, 2));
}

const RACE_ROUNDS = 150;

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, { prepare });

  it('R7.2: /proc/sys, /proc/sysrq-trigger and /sys cannot be opened for writing', async ({
    expect,
  }) => {
    const targets = [
      '/proc/sys/kernel/core_pattern',
      '/proc/sys/kernel/modprobe',
      '/proc/sys/vm/drop_caches',
      '/proc/sysrq-trigger',
      '/sys/kernel/mm/transparent_hugepage/enabled',
      '/sys/kernel/uevent_helper',
    ].filter((path) => existsSync(path));
    const before = await Promise.all(targets.map((path) => nodeState(path)));
    const result = await server().sh(seat().x('open-write', ...targets));
    for (const path of targets) {
      expect.soft(verdictLine(result.output, path)).toMatch(blockedWith(path, ['EACCES', 'EPERM']));
    }
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
    expect(await Promise.all(targets.map((path) => nodeState(path)))).toEqual(before);
  });

  it('R7.2: an outside file cannot be hard-linked into the scope and written through, nor a scope file renamed out', async ({
    expect,
  }) => {
    const victim = await seat().write(join(seat().outside, 'linked.txt'), 'original\n');
    const before = await treeState(seat().outside);
    const result = await server().sh(seat().x('link-rename', victim, seat().scope, seat().outside));
    expect
      .soft(verdictLine(result.output, 'hardlink-in'))
      .toMatch(blockedWith('hardlink-in', ['EXDEV', 'EACCES', 'EPERM']));
    expect
      .soft(verdictLine(result.output, 'rename-out'))
      .toMatch(blockedWith('rename-out', ['EXDEV', 'EACCES', 'EPERM']));
    expect(await treeState(seat().outside)).toEqual(before);
    expect(await fileState(join(seat().scope, 'leaving.txt'))).toMatchObject({ type: 'file' });
  });

  it(`R7.1, R7.6: swapping a scope directory for a symlink to outside while the server resolves working_directory and path arguments (${String(RACE_ROUNDS)} rounds each) writes nothing outside and runs nothing there`, async () => {
    const target = await seat().mkdir(join(seat().outside, 'race-target'));
    await seat().mkdir(join(seat().scope, 'race-dir'));
    const racer = await server().start(
      `ln -s ${target} race-link && ${seat().x('swap-race', 'race-dir', 'race-link', 30, 200)}`,
      // It swaps while the calls below run: beside them, not a writer they wait for (§14 lanes).
      { timeout_seconds: 60, concurrency: 'service' },
    );
    const cwds: string[] = [];
    let refused = 0;
    try {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const viaCwd = await server().call('sandboxed_shell', {
          // The kernel's answer: bash's own `pwd -P` re-resolves $PWD by name, so it would report
          // where the path points now, not where the shell is.
          command: 'readlink /proc/self/cwd; touch raced-cwd.txt',
          working_directory: 'race-dir',
        });
        const started = viaCwd.structuredContent as { operation_id?: string } | undefined;
        if (viaCwd.isError === true || started?.operation_id === undefined) refused++;
        else {
          const done = await server().wait(started.operation_id, 10);
          const first = (done?.output ?? '').split('\n')[0] ?? '';
          // The helper's own check, after the change of directory, refused to start it.
          if (/^ahma-sandbox: .* is not inside the scope /.test(first)) refused++;
          else cwds.push(first);
        }
        const viaPath = await server().call('rt_touch', { file: 'race-dir/raced-arg.txt' });
        if (viaPath.isError === true && /outside the sandbox scope/.test(textOf(viaPath)))
          refused++;
      }
    } finally {
      await server().cancel(racer);
    }
    const outsideCwds = cwds.filter((cwd) => !cwd.startsWith(`${seat().scope}/`));
    const tally = `${String(cwds.length)} shell runs, ${String(refused)} calls refused`;
    expect(await treeState(target), tally).toEqual({});
    expect(outsideCwds, `commands that ran with their cwd outside the scope (${tally})`).toEqual(
      [],
    );
    expect(
      cwds.length,
      'some calls must get through the check for the race to mean anything',
    ).toBeGreaterThan(0);
  }, 120_000);

  it('R7.2, R7.6: an outside listener on an abstract unix socket is unreachable (socket() and io_uring)', async () => {
    const listener = await abstractListener();
    try {
      const plain = await server().sh(seat().x('unix-connect', 'plain', listener.address));
      const uring = await server().sh(seat().x('unix-connect', 'uring', listener.address));
      expect(verdicts(plain.output + uring.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
      expect(listener.connections()).toBe(0);
    } finally {
      await listener.close();
    }
  });

  it('R7.6: the node server’s and the zygote’s files cannot be written through /proc/<pid>/fd, cwd or root', async ({
    expect,
  }) => {
    const zygote = await server().zygote();
    const before = await treeState(seat().outside);
    const result = await server().sh(
      seat().x(
        'proc-fd',
        `node=${String(server().pid)}`,
        `zygote=${String(zygote)}`,
        seat().outside,
      ),
    );
    for (const label of ['node', 'zygote']) {
      for (const kind of ['fd', 'cwd', 'root']) {
        const attempt = `${kind}-${label}`;
        expect
          .soft(verdictLine(result.output, attempt))
          .toMatch(blockedWith(attempt, ['EACCES', 'EPERM', 'ENOENT']));
      }
    }
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
    expect(await treeState(seat().outside)).toEqual(before);
    // The node server's working directory is its HOME, outside the scope.
    expect(await fileState(join(seat().home, 'ahma-redteam-via-cwd'))).toBeUndefined();
  });

  it("R7.6: another operation's output and request cannot be written or read through /proc/<pid>/fd or environ", async () => {
    // The victim prints, waits, prints: an attacker writing into its stdout (the pipe to the
    // zygote) would put words into its result; its fds 3 and 4 were its request channels.
    // It runs beside the attacker (`service`: a second writer of the workspace would wait for it
    // to end, and find no victim), and until the test releases it, however long the attack takes.
    const marker = `victim-${String(Date.now())}`;
    const released = join(seat().scope, `${marker}.released`);
    const loop = `until [ -e ${quote(released)} ]; do sleep 0.05; done`;
    const victim = await server().start(
      `echo start; exec -a ${marker} sh -c ${quote(loop)}; echo unreachable`,
      { concurrency: 'service' },
    );
    const attacker = await server().sh(
      `for i in $(seq 50); do p=$(pgrep -f '^${marker}') && break; sleep 0.05; done; ` +
        '[ -n "$p" ] || { echo "no victim found"; exit 1; }; ' +
        'for fd in 0 1 2 3 4; do { echo INJECTED > /proc/$p/fd/$fd; } 2>/dev/null && echo "wrote $fd" || echo "refused $fd"; done; ' +
        'cat /proc/$p/environ >/dev/null 2>&1 && echo "read environ" || echo "refused environ"',
    );
    expect(attacker.output).toBe(
      'refused 0\nrefused 1\nrefused 2\nrefused 3\nrefused 4\nrefused environ\n',
    );
    await writeFile(released, '');
    const result = await server().wait(victim, 10);
    expect(result?.output).toBe('start\n');
  });
});
