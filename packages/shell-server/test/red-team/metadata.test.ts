// Red team, metadata (R7.6 "set-uid/set-gid chmod" on the seccomp deny-list; "what is not
// covered: metadata calls Landlock cannot see"). Landlock (ABI <= 7) governs a file's bytes and
// names, not its mode, owner, times or extended attributes: chmod, utime and setxattr of a file
// outside the scope that the user owns are NOT refused. What must hold: no set-uid/set-gid bit,
// inside or outside the scope, by any of chmod, fchmod, fchmodat or a create mode; no chown of a
// file outside (a user cannot anyway, root must not). The rest is documented as a limitation, and
// asserted as it is today so that a kernel that starts refusing it shows up here.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  blockedWith,
  confined,
  eachIdentity,
  fileState,
  redTeamFile,
  verdictLine,
  verdicts,
} from './harness.js';

const file = redTeamFile(['chmod-setid', 'metadata', 'caps']);

const SETID_ATTEMPTS = [
  'chmod-setuid',
  'chmod-setgid',
  'fchmod-setuid',
  'fchmodat-setgid',
  'fchmodat2-setuid',
];

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity);

  it('R7.6: chmod, fchmod, fchmodat and fchmodat2 cannot add set-uid/set-gid bits to a file outside the scope', async ({
    expect,
  }) => {
    const target = await seat().write(join(seat().outside, 'tool'), '#!/bin/sh\n', 0o755);
    const before = await fileState(target);
    const result = await server().sh(seat().x('chmod-setid', target));
    for (const attempt of SETID_ATTEMPTS) {
      const verdict = verdictLine(result.output, attempt);
      // fchmod needs the file open, and a file outside is not even readable (R7.10).
      if (attempt === 'fchmod-setuid' && verdict.includes(': error: open ')) {
        expect.soft(verdict).toMatch(/: Permission denied$/);
        continue;
      }
      // ENOSYS: a kernel before 6.6 has no fchmodat2.
      expect.soft(verdict).toMatch(blockedWith(attempt, ['EPERM', 'ENOSYS']));
    }
    expect(await fileState(target)).toEqual(before);
  });

  it('R7.6: … nor to a file inside the scope (no set-uid program left for someone to run)', async ({
    expect,
  }) => {
    const target = await seat().write(join(seat().scope, 'tool'), '#!/bin/sh\n', 0o755);
    const result = await server().sh(seat().x('chmod-setid', target));
    for (const attempt of SETID_ATTEMPTS) {
      // ENOSYS: a kernel before 6.6 has no fchmodat2.
      expect
        .soft(verdictLine(result.output, attempt))
        .toMatch(blockedWith(attempt, ['EPERM', 'ENOSYS']));
    }
    expect((await fileState(target))?.mode).toBe('0755');
  });

  it('R7.6: a file cannot be created set-uid either (open with O_CREAT and mode 04755)', async () => {
    const target = join(seat().scope, 'created-setuid');
    const result = await server().sh(seat().x('chmod-setid', '--create', target));
    expect(verdicts(result.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
    const mode = (await fileState(target))?.mode;
    expect(mode === undefined || (Number.parseInt(mode, 8) & 0o6000) === 0).toBe(true);
  });

  it('R7.6: chown of a file outside the scope fails', async ({ expect }) => {
    const target = await seat().write(join(seat().outside, 'owned.txt'), 'owned\n');
    const before = await fileState(target);
    const result = await server().sh(seat().x('caps', 'chown', target));
    expect.soft(verdictLine(result.output, 'chown')).toMatch(blockedWith('chown', ['EPERM']));
    expect(await fileState(target)).toEqual(before);
  });

  it('R7.6 documented limitation: chmod (without set-id bits), utime and setxattr of an outside file are NOT refused (Landlock cannot see them)', async () => {
    const target = await seat().write(join(seat().outside, 'metadata.txt'), 'bytes stay\n', 0o600);
    const before = await fileState(target);
    const result = await server().sh(seat().x('metadata', target));
    // Today's behaviour, on purpose: each call goes through. When this fails, the kernel (or the
    // sandbox) started refusing them: update docs/security.md and turn these into refusals.
    expect(verdictLine(result.output, 'chmod')).toMatch(/^chmod: ESCAPED/);
    expect(verdictLine(result.output, 'utime')).toMatch(/^utime: ESCAPED/);
    expect(verdictLine(result.output, 'setxattr')).toMatch(
      /^setxattr: (ESCAPED|blocked: EOPNOTSUPP)/,
    );
    const after = await fileState(target);
    expect(after).toMatchObject({ mode: '0640', mtimeNs: '1000000000000000000' });
    // …but the bytes, the only thing Landlock guards here, did not change.
    expect(after?.sha256).toBe(before?.sha256);
  });
});
