// Red team, devices (R7.6 "device access limited to what tools need", "device mknod",
// "TIOCSTI/TIOCLINUX" on the seccomp deny-list). Root's CAP_MKNOD makes a node for the disk
// inside the scope, where Landlock lets the command write; TIOCSTI types into a terminal outside
// (a shell an operator left open); TIOCLINUX drives a virtual console. No exploit here ever writes
// to a device: opening it for writing is the proof.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, it } from 'vitest';
import {
  blockedWith,
  confined,
  eachIdentity,
  fileState,
  nodeState,
  redTeamFile,
  type Seat,
  verdictLine,
  verdicts,
} from './harness.js';

const file = redTeamFile(['mknod', 'open-write', 'tty-ioctl', 'pty-hold']);

/** The machine's block devices a command could aim at (loop, disks), and /dev/kmsg. */
function deviceTargets(): string[] {
  const disks = readdirSync('/dev').filter((name) =>
    /^(loop\d+|sd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+|mmcblk\d+)$/.test(name),
  );
  return [...disks.slice(0, 12).map((name) => `/dev/${name}`), '/dev/kmsg'].filter((path) =>
    existsSync(path),
  );
}

interface Pty {
  readonly slave: string;
  /** Ends the helper and returns what reached the terminal: its input queue and its echo. */
  received(): Promise<{ input: string; echo: string }>;
}

/** An outside terminal owned by the identity (pty-hold), as a shell outside would have. */
async function outsidePty(seat: Seat): Promise<Pty> {
  const child = seat.spawnOutside(seat.exploit('pty-hold'), []);
  const lines = createInterface({ input: child.stdout ?? process.stdin })[Symbol.asyncIterator]();
  const first = await lines.next();
  const slave = /^slave: (\S+)$/.exec(String(first.value))?.[1];
  if (slave === undefined) throw new Error(`pty-hold said ${String(first.value)}`);
  return {
    slave,
    received: async () => {
      child.stdin?.write('report\n');
      const input = await lines.next();
      const echo = await lines.next();
      return {
        input: String(input.value).replace(/^input:\s*/, ''),
        echo: String(echo.value).replace(/^echo:\s*/, ''),
      };
    },
  };
}

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity);

  it('R7.6: mknod of a block device (loop, 7:0) in the scope is refused', async ({ expect }) => {
    const node = join(seat().scope, 'loop-node');
    const result = await server().sh(seat().x('mknod', node, 'b', 7, 0));
    expect
      .soft(verdictLine(result.output, 'mknod-block'))
      .toMatch(blockedWith('mknod-block', ['EPERM']));
    expect(await fileState(node)).toBeUndefined();
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
  });

  it('R7.6: mknod of a char device (/dev/kmsg, 1:11) in the scope is refused', async ({
    expect,
  }) => {
    const node = join(seat().scope, 'kmsg-node');
    const result = await server().sh(seat().x('mknod', node, 'c', 1, 11));
    expect
      .soft(verdictLine(result.output, 'mknod-char'))
      .toMatch(blockedWith('mknod-char', ['EPERM']));
    expect(await fileState(node)).toBeUndefined();
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
  });

  it('R7.6: existing block devices (loop, disks) and /dev/kmsg cannot be opened for writing', async ({
    expect,
  }) => {
    const targets = deviceTargets();
    expect(targets.length).toBeGreaterThan(0);
    const before = await Promise.all(targets.map((path) => nodeState(path)));
    const result = await server().sh(seat().x('open-write', ...targets));
    for (const path of targets) {
      expect.soft(verdictLine(result.output, path)).toMatch(blockedWith(path, ['EACCES', 'EPERM']));
    }
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
    expect(await Promise.all(targets.map((path) => nodeState(path)))).toEqual(before);
  });

  // Two layers: Landlock keeps /dev/pts out of reach (EACCES at open), and the seccomp deny-list
  // refuses the ioctls themselves (EPERM; packages/core/test/sandbox/helper.test.ts proves that
  // layer alone, on a terminal the command inherits).
  it('R7.6: TIOCSTI into a terminal outside is refused and nothing is typed', async ({
    expect,
  }) => {
    const pty = await outsidePty(seat());
    const result = await server().sh(
      seat().x('tty-ioctl', 'tiocsti', pty.slave, 'echo injected-by-ahma\n'),
    );
    const { input, echo } = await pty.received();
    expect
      .soft(verdictLine(result.output, 'tiocsti'))
      .toMatch(blockedWith('tiocsti', ['EACCES', 'EPERM']));
    expect({ input, echo }).toEqual({ input: '', echo: '' });
  });

  it('R7.6: TIOCLINUX on an outside terminal is refused', async () => {
    const pty = await outsidePty(seat());
    const result = await server().sh(seat().x('tty-ioctl', 'tioclinux', pty.slave));
    await pty.received();
    expect(verdictLine(result.output, 'tioclinux')).toMatch(
      blockedWith('tioclinux', ['EACCES', 'EPERM']),
    );
  });

  it('R7.6: TIOCLINUX on the virtual console (/dev/tty0) is refused', async (context) => {
    if (!existsSync('/dev/tty0')) context.skip('this machine has no virtual console');
    const result = await server().sh(seat().x('tty-ioctl', 'tioclinux', '/dev/tty0'));
    expect(verdictLine(result.output, 'tioclinux')).toMatch(
      blockedWith('tioclinux', ['EPERM', 'EACCES']),
    );
  });
});
