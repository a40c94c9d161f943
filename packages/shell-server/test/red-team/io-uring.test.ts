// Red team, io_uring (R7.2, R7.6): io_uring performs system calls on the command's behalf without
// the command making them, so the seccomp filter that refuses socket(AF_UNIX) never sees
// IORING_OP_SOCKET + IORING_OP_CONNECT. io_uring must be refused as a whole (io_uring_setup
// fails), and an outside listener must see no connection.
import { join } from 'node:path';
import { afterEach, it } from 'vitest';
import {
  blockedWith,
  confined,
  eachIdentity,
  redTeamFile,
  type Seat,
  verdictLine,
  verdicts,
} from './harness.js';
import { abstractListener, pathListener, type Listener } from './listener.js';

const file = redTeamFile(['unix-connect']);

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity);
  let listener: Listener | undefined;
  afterEach(async () => {
    await listener?.close();
    listener = undefined;
  });

  const outsideSocket = async (s: Seat) =>
    (listener = await pathListener(join(s.outside, `listener-${String(Date.now())}.sock`)));

  it('R7.6: io_uring cannot connect to an outside unix socket (io_uring_setup is refused)', async ({
    expect,
  }) => {
    const target = await outsideSocket(seat());
    const result = await server().sh(seat().x('unix-connect', 'uring', target.address));
    expect
      .soft(verdictLine(result.output, 'io_uring_setup'))
      .toMatch(blockedWith('io_uring_setup', ['EPERM', 'ENOSYS']));
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
    expect(target.connections()).toBe(0);
  });

  it('R7.2: a plain socket(AF_UNIX) + connect to an outside unix socket is refused', async ({
    expect,
  }) => {
    const target = await outsideSocket(seat());
    const result = await server().sh(seat().x('unix-connect', 'plain', target.address));
    expect
      .soft(verdictLine(result.output, 'socket'))
      .toMatch(blockedWith('socket', ['EACCES', 'EPERM']));
    expect(result.exit_code).toBe(0);
    expect(target.connections()).toBe(0);
  });

  it('R7.6: io_uring cannot connect to an outside abstract unix socket either', async ({
    expect,
  }) => {
    const target = (listener = await abstractListener());
    const result = await server().sh(seat().x('unix-connect', 'uring', target.address));
    expect
      .soft(verdictLine(result.output, 'io_uring_setup'))
      .toMatch(blockedWith('io_uring_setup', ['EPERM', 'ENOSYS']));
    expect(target.connections()).toBe(0);
  });
});
