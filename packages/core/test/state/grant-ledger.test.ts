// R7.18: the ledger of the person's lasting network grants, in Ahma's private state: added once per
// host and scope, listed with who, when and why, revoked by id, written whole (0600, by rename),
// and refused when it is not a plain file of this user that only this user may write.
import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GrantLedger, LEDGER_FILE } from '../../src/state/grant-ledger.js';
import { stateRootCandidates } from '../../src/state/state-dir.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ahma-ledger-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const grant = (host: string, scope = '/work/project') => ({
  kind: 'host' as const,
  rule: host,
  scope,
  who: 'test-client 1.0',
  when: '2026-11-27T00:00:00.000Z',
  why: 'cargo_build (op_1): static.crates.io:443 is not on the allowlist',
});

describe('GrantLedger', () => {
  it('R7.18: no ledger yet lists no grants', async () => {
    expect(await new GrantLedger(root).list()).toEqual([]);
  });

  it('R7.18: a grant is recorded once per host and scope, with who, when and why, in a 0600 file', async () => {
    const ledger = new GrantLedger(root);
    const added = await ledger.add(grant('static.crates.io:443'));
    expect(added.id).toMatch(/^g-[0-9a-f]{8}$/);
    expect(await ledger.add(grant('static.crates.io:443'))).toEqual(added);
    await ledger.add(grant('static.crates.io:443', '/work/other'));
    const listed = await new GrantLedger(root).list();
    expect(listed).toHaveLength(2);
    expect(listed[0]).toEqual(added);
    expect(await ledger.forScope('/work/other', 'host')).toHaveLength(1);
    expect((await stat(join(root, LEDGER_FILE))).mode & 0o777).toBe(0o600);
  });

  it('R7.18: concurrent grants are all kept', async () => {
    const ledger = new GrantLedger(root);
    await Promise.all(
      ['a.example:443', 'b.example:443', 'c.example:443'].map((host) => ledger.add(grant(host))),
    );
    expect((await ledger.list()).map((each) => each.rule).sort()).toEqual([
      'a.example:443',
      'b.example:443',
      'c.example:443',
    ]);
  });

  it('R7.18: revoke removes grants by id and returns them; unknown ids remove nothing', async () => {
    const ledger = new GrantLedger(root);
    const first = await ledger.add(grant('a.example:443'));
    const second = await ledger.add(grant('b.example:443'));
    expect(await ledger.revoke(['g-00000000'])).toEqual([]);
    expect(await ledger.revoke([first.id])).toEqual([first]);
    expect(await ledger.list()).toEqual([second]);
  });

  it('R7.18: a malformed ledger, a link, and one others may write are refused, never trusted', async () => {
    const path = join(root, LEDGER_FILE);
    await writeFile(path, '{"version": 1, "grants": [{"rule": "*"}]}', { mode: 0o600 });
    await expect(new GrantLedger(root).list()).rejects.toThrow(/malformed/);
    await writeFile(path, JSON.stringify({ version: 1, grants: [] }), { mode: 0o600 });
    await chmod(path, 0o666);
    await expect(new GrantLedger(root).list()).rejects.toThrow(/others may write it/);
    await rm(path);
    const elsewhere = join(root, 'elsewhere.json');
    await writeFile(elsewhere, JSON.stringify({ version: 1, grants: [] }), { mode: 0o600 });
    await symlink(elsewhere, path);
    await expect(new GrantLedger(root).list()).rejects.toThrow(/not a regular file/);
    expect(await readFile(elsewhere, 'utf8')).toContain('"grants"');
  });
});

describe('stateRootCandidates', () => {
  it('R7.18: --state-dir alone when given, else the XDG state home, ~/.local/state and the runtime dir', () => {
    expect(stateRootCandidates('/srv/ahma', { HOME: '/home/u' })).toEqual(['/srv/ahma']);
    expect(
      stateRootCandidates(undefined, {
        XDG_STATE_HOME: '/x/state',
        HOME: '/home/u',
        XDG_RUNTIME_DIR: '/run/user/1',
      }),
    ).toEqual(['/x/state/ahma', '/home/u/.local/state/ahma', '/run/user/1/ahma']);
  });
});
