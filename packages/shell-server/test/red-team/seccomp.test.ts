// Red team, the seccomp deny-list (R7.6, modelled on Docker's default profile): system calls no
// build or test needs, which widen the kernel's attack surface or step around Landlock (io_uring
// makes system calls the filter never sees; a user namespace hands out capabilities; keyrings,
// bpf, perf and userfaultfd are classic kernel-exploit primitives). Each must fail with EPERM or
// ENOSYS: any other answer means the call reached the kernel's code for it. The exploit calls
// each with harmless arguments (see exploits/syscalls.c).
//
// clone3 cannot be filtered by its flags (they are in memory a filter cannot read), so a deny-list
// that refuses clone(CLONE_NEWUSER) must refuse clone3 altogether, and with ENOSYS: glibc (2.34+)
// creates threads and children with clone3 and falls back to clone on ENOSYS only, so EPERM would
// break every threaded program. The last test checks that ordinary work still runs.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { blockedWith, confined, eachIdentity, redTeamFile, verdictLine } from './harness.js';

const file = redTeamFile(['syscalls']);

const DENIED = [
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'open_by_handle_at',
  'init_module',
  'finit_module',
  'delete_module',
  'kexec_load',
  'kexec_file_load',
  'reboot',
  'mount',
  'umount2',
  'unshare-newuser',
  'clone-newuser',
  'clone3-newuser',
] as const;

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, {
    prepare: async (s) => {
      await s.mkdir(join(s.scope, 'mnt'));
    },
  });

  it.each(DENIED)('R7.6: %s is refused (EPERM or ENOSYS)', async (name) => {
    const result = await server().sh(seat().x('syscalls', join(seat().scope, 'mnt'), name));
    expect(verdictLine(result.output, name)).toMatch(blockedWith(name, ['EPERM', 'ENOSYS']));
  });

  it('R7.6: clone3 is refused with ENOSYS, the answer on which glibc falls back to clone', async () => {
    const result = await server().sh(
      seat().x('syscalls', join(seat().scope, 'mnt'), 'clone3-newuser'),
    );
    expect(verdictLine(result.output, 'clone3-newuser')).toMatch(
      blockedWith('clone3-newuser', ['ENOSYS']),
    );
  });

  it('R7.6: ordinary work still runs under the deny-list (threads, node, git, python)', async () => {
    const git = 'git -c user.name=Ahma -c user.email=ahma@example.com -c init.defaultBranch=main';
    const result = await server().sh(
      [
        'set -e',
        `node -e 'const { Worker } = require("node:worker_threads"); new Worker("process.exit(0)", { eval: true }).on("exit", (c) => console.log("worker", c))'`,
        `${git} init -q repo && cd repo && echo hi > f && ${git} add f && ${git} commit -qm one && ${git} log --format=%s`,
        `python3 -c 'import threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()'`,
      ].join('\n'),
    );
    expect(result).toMatchObject({ status: 'completed', output: 'worker 0\none\nthread\n' });
  });
});
