// R7.18: `ahma-shell grants list|revoke` reads the ledger where the server keeps it (--state-dir,
// else the XDG state home …), shows who gave each grant, when and why, and removes grants by id.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GrantLedger } from '@ahma/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { grantsCommand } from '../../src/cli/grants.js';

let stateHome: string;

beforeEach(async () => {
  stateHome = await mkdtemp(join(tmpdir(), 'ahma-grants-'));
});

afterEach(async () => {
  await rm(stateHome, { recursive: true, force: true });
});

async function run(argv: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const code = await grantsCommand(
    argv,
    { XDG_STATE_HOME: stateHome, HOME: '/nonexistent' },
    {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
    },
  );
  return { code, stdout, stderr };
}

describe('ahma-shell grants', () => {
  it('R7.18: lists nothing when no server ever kept a grant', async () => {
    expect(await run(['list'])).toEqual({ code: 0, stdout: 'no grants\n', stderr: '' });
  });

  it('R7.18: lists each grant with who, when and why, as text or JSON, and revokes by id', async () => {
    await mkdir(join(stateHome, 'ahma'), { mode: 0o700 });
    const ledger = new GrantLedger(join(stateHome, 'ahma'));
    await ledger.add({
      kind: 'host',
      rule: 'static.crates.io:443',
      scope: '/work/project',
      who: 'claude-code 2.1.0',
      when: '2026-11-27T02:00:00.000Z',
      why: 'cargo_build (op_3): static.crates.io:443 is not on the allowlist',
    });
    const [grant] = await ledger.list();
    const text = await run(['list']);
    expect(text.stdout).toContain(`${grant?.id ?? ''}  reach static.crates.io:443`);
    expect(text.stdout).toContain('who:   claude-code 2.1.0');
    expect(text.stdout).toContain('why:   cargo_build (op_3)');
    const json = await run(['list', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([grant]);
    expect((await run(['revoke', grant?.id ?? ''])).stdout).toContain('revoked');
    expect(await ledger.list()).toEqual([]);
  });

  it('R7.18: usage errors exit 2 and say what is accepted; an unknown id exits 1', async () => {
    expect((await run([])).code).toBe(2);
    expect((await run(['grant', 'x'])).stderr).toContain('unknown action "grant"');
    expect((await run(['revoke'])).stderr).toContain('needs the ids');
    expect((await run(['list', '--bogus'])).code).toBe(2);
    const unknown = await run(['revoke', 'g-12345678']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no grant g-12345678');
  });
});
