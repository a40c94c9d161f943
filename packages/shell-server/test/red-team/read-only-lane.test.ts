// Red team, the read_only lane (SPEC §14 lanes; docs/security.md, metadata): a command run in the
// read_only lane — by a tool file's "concurrency": "read_only" or a call's `concurrency` — is the
// attacker, and the scope's files the target. Its bytes and names must not change, by any road:
// a write or truncate, a hard link or symlink made in the temp directory (which it may write),
// a rename from there, /proc/self/cwd or a re-opened descriptor, rm and rmdir. What Landlock does
// not see (a file's mode and times) is documented, and asserted as it is today in its own test.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { confined, eachIdentity, redTeamFile } from './harness.js';

const file = redTeamFile([]);

/** Each attempt echoes `NAME=<exit status>`; the scope's victim.txt and sub/ are the targets. */
const ATTACK = [
  'T=$TMPDIR',
  'ln victim.txt $T/hard 2>/dev/null && echo again >> $T/hard; echo "hardlink=$?"',
  'ln -s "$PWD/victim.txt" $T/soft 2>/dev/null; echo again >> $T/soft; echo "symlink=$?"',
  'echo x > $T/planted && mv $T/planted ./planted; echo "rename=$?"',
  ': > victim.txt; echo "truncate=$?"',
  'echo again >> /proc/self/cwd/victim.txt; echo "cwd=$?"',
  'exec 3<victim.txt; echo again > /proc/self/fd/3; echo "reopen=$?"',
  'rm -f victim.txt; echo "unlink=$?"',
  'rmdir sub; echo "rmdir=$?"',
].join('\n');

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity);

  it('SPEC §14 lanes, R7.2: a read_only command changes no byte or name in the scope, by any road', async ({
    expect,
  }) => {
    const victim = await seat().write(join(seat().scope, 'victim.txt'), 'original\n');
    await seat().mkdir(join(seat().scope, 'sub'));
    const result = await server().sh(ATTACK, { concurrency: 'read_only' });
    for (const attempt of ['hardlink', 'symlink', 'rename', 'truncate', 'cwd', 'reopen']) {
      expect.soft(result.output).toMatch(new RegExp(`^${attempt}=[1-9]`, 'm'));
    }
    expect.soft(result.output).toMatch(/^unlink=[1-9]/m);
    expect.soft(result.output).toMatch(/^rmdir=[1-9]/m);
    expect(await readFile(victim, 'utf8')).toBe('original\n');
    expect((await stat(join(seat().scope, 'sub'))).isDirectory()).toBe(true);
    await expect(stat(join(seat().scope, 'planted'))).rejects.toThrow(/ENOENT/);
  });

  it('SPEC §14 lanes documented limitation: a read_only command can still change a scope file’s mode and times (Landlock sees no metadata calls)', async () => {
    const victim = await seat().write(join(seat().scope, 'victim.txt'), 'original\n');
    const result = await server().sh(
      'chmod 600 victim.txt; echo "chmod=$?"; touch -d 2000-01-01 victim.txt; echo "utime=$?"',
      { concurrency: 'read_only' },
    );
    expect(result.output).toBe('chmod=0\nutime=0\n');
    expect((await stat(victim)).mode & 0o777).toBe(0o600);
    expect(await readFile(victim, 'utf8')).toBe('original\n');
  });
});
