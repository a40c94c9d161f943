// Red team, capabilities (R7.6 "all capabilities dropped for commands (opt-out flag,
// documented)"). Landlock confines paths, not privileges: a command of a root server keeps
// CAP_CHOWN, CAP_SETUID, CAP_MKNOD, CAP_SYS_ADMIN… unless the helper drops them. As an ordinary
// user the kernel already gives a command none (CapBnd stays full: dropping it needs CAP_SETPCAP,
// and no_new_privs makes it moot), so for the user these tests pin what must stay true.
// `--keep-capabilities` is the opt-out.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  blockedWith,
  confined,
  eachIdentity,
  fileState,
  redTeamFile,
  verdictLine,
} from './harness.js';

const file = redTeamFile(['caps']);

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity);
  // The bounding set can only be emptied by a process that has CAP_SETPCAP: root.
  const sets =
    identity.uid === 0 ? ['Inh', 'Prm', 'Eff', 'Bnd', 'Amb'] : ['Inh', 'Prm', 'Eff', 'Amb'];

  it(`R7.6: a command runs with capability sets ${sets.join('/')} all 0`, async () => {
    const result = await server().sh(seat().x('caps', 'sets', ...sets));
    expect(verdictLine(result.output, 'capabilities')).toMatch(/^capabilities: blocked: all zero/);
  });

  it('R7.6: chown of a scope file to another uid fails', async ({ expect }) => {
    const target = await seat().write(join(seat().scope, 'mine.txt'), 'mine\n');
    const before = await fileState(target);
    const result = await server().sh(seat().x('caps', 'chown', target));
    expect.soft(verdictLine(result.output, 'chown')).toMatch(blockedWith('chown', ['EPERM']));
    expect(await fileState(target)).toEqual(before);
  });

  it('R7.6: setuid(1) and setgid(1) fail', async ({ expect }) => {
    const result = await server().sh(seat().x('caps', 'setuid'));
    expect.soft(verdictLine(result.output, 'setuid')).toMatch(blockedWith('setuid', ['EPERM']));
    expect(verdictLine(result.output, 'setgid')).toMatch(blockedWith('setgid', ['EPERM']));
  });

  it('R7.6: --keep-capabilities (the documented opt-out) keeps the bounding set', async () => {
    const keeping = await seat().server(['--keep-capabilities']);
    const result = await keeping.sh(seat().x('caps', 'sets', 'Bnd'));
    expect(verdictLine(result.output, 'capabilities')).toMatch(
      /^capabilities: ESCAPED: CapBnd=[0-9a-f]*[1-9a-f][0-9a-f]*$/,
    );
  });
});
