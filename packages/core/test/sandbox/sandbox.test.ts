// R7.2/R7.4: the sandbox is probed when it is created and never silently skipped: Landlock on Linux
// (through the compiled helper), Seatbelt on macOS, a refusal that explains the fix everywhere else.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { defaultHelperPath } from '../../src/sandbox/helper-binary.js';
import { createSandbox, type SandboxOptions } from '../../src/sandbox/sandbox.js';
import { SANDBOX_EXEC } from '../../src/sandbox/seatbelt.js';
import { refusal, removeAll, varTmpDir } from '../support/engine.js';

let scope: string;
let stateDir: string;
let cacheRoot: string;
let realTmp: string;

beforeAll(async () => {
  scope = await varTmpDir('scope');
  stateDir = await varTmpDir('state');
  cacheRoot = join(stateDir, 'cache');
  realTmp = await realpath(tmpdir());
});

afterAll(() => removeAll([scope, stateDir]));

const sandbox = (options: Partial<SandboxOptions> = {}) =>
  createSandbox({ scope, cacheRoot, ...options });

describe('createSandbox on Linux', () => {
  it('R7.2: probes the helper and reports Landlock with its ABI', async () => {
    const box = await sandbox();
    expect(box.mechanism).toBe('landlock');
    expect(box.abi).toBeGreaterThanOrEqual(1);
    expect(box.scope).toBe(scope);
    expect(box.cacheRoot).toBe(await realpath(cacheRoot));
  });

  it('R7.2: writable roots are the scope, the temp dir and the cache root (real paths)', async () => {
    const box = await sandbox({ extraWritable: [stateDir] });
    expect(box.writable).toEqual(expect.arrayContaining([scope, realTmp, box.cacheRoot, stateDir]));
    expect(new Set(box.writable).size).toBe(box.writable.length);
  });

  it('R7.10: the read policy: HOME and the system granted, the private state and --deny-read denied, --deny-read of HOME itself removes HOME', async () => {
    const home = await varTmpDir('home');
    await mkdir(join(home, 'private'), { recursive: true });
    await mkdir(join(home, 'open'), { recursive: true });
    const box = await sandbox({
      home,
      privateState: stateDir,
      denyRead: ['~/private'],
      platform: 'linux',
    });
    const access = (path: string) => box.rules.find((rule) => rule.path === path)?.access;
    expect(access('/usr')).toBe('read');
    expect(access('/')).toBe('list');
    expect(access(home)).toBe('list');
    expect(access(join(home, 'open'))).toBe('read');
    expect(access(join(home, 'private'))).toBeUndefined();
    expect(box.policy.denies.map((deny) => deny.path)).toEqual(
      expect.arrayContaining([stateDir, join(home, 'private')]),
    );
    // The cache root lies in the private state here: granted by name all the same.
    expect(access(box.cacheRoot)).toBe('write');
    const none = await sandbox({ home, denyRead: ['~'], platform: 'linux' });
    expect(none.rules.filter((rule) => rule.path.startsWith(home))).toEqual([]);
    await removeAll([home]);
  });

  it('R7.10: a --deny-read inside a writable path is not half-applied: warned, and the scope stays whole', async () => {
    const box = await sandbox({ denyRead: [join(scope, 'secret.env')], platform: 'linux' });
    expect(box.warnings.join('\n')).toContain(
      `--deny-read ${join(scope, 'secret.env')} is NOT enforced`,
    );
    expect(box.rules.find((rule) => rule.path === scope)?.access).toBe('write');
  });

  it('R7.2: writableTemp:false leaves the temp dir out', async () => {
    const box = await sandbox({ writableTemp: false });
    expect(box.writable).not.toContain(realTmp);
    expect(box.writable).toEqual(expect.arrayContaining([scope, box.cacheRoot]));
  });

  it('R7.2: symlinked writable roots are passed to the helper as real paths', async () => {
    const target = join(stateDir, 'extra-target');
    const link = join(stateDir, 'extra-link');
    await mkdir(target);
    await symlink(target, link);
    const box = await sandbox({ extraWritable: [link] });
    expect(box.writable).toContain(target);
    expect(box.writable).not.toContain(link);
  });

  it('R7.2: wrap() runs the command through the helper, confined to the writable roots', async () => {
    const box = await sandbox({ graceMs: 750 });
    const line = box.wrap(['sh', '-c', 'echo "$0" "$1"', 'a b', '$HOME']);
    expect(line.file).toBe(defaultHelperPath());
    const separator = line.args.indexOf('--');
    expect(line.args.slice(separator + 1)).toEqual(['sh', '-c', 'echo "$0" "$1"', 'a b', '$HOME']);
    const flags = line.args.slice(0, separator);
    for (const path of box.writable) expect(flags.join('\0')).toContain(`--rw\0${path}`);
    expect(flags.join(' ')).toContain('--grace-ms 750');
    expect(flags).not.toContain('--allow-unix-sockets');
    expect(flags).not.toContain('--unconfined');

    const ran = spawnSync(line.file, line.args, { cwd: scope, encoding: 'utf8' });
    expect(ran.status).toBe(0);
    expect(ran.stdout).toBe('a b $HOME\n');
    const outside = spawnSync(...wrapped(box.wrap(['touch', join(stateDir, 'x')])));
    expect(outside.status).not.toBe(0);

    const allowing = await sandbox({ allowUnixSockets: true });
    expect(allowing.wrap(['true']).args).toContain('--allow-unix-sockets');
  });

  it('R7.4: a helper that does not exist → SANDBOX_UNAVAILABLE explaining the fix', async () => {
    // Two levels below the test's own directory: a helper's grandparent is where the other
    // targets' directories are looked for, and /var/tmp may hold anything.
    const missing = join(stateDir, 'native', 'no-such-helper');
    const error = await refusal(sandbox({ helperPath: missing }));
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toContain(missing);
    expect(error.message).toMatch(/missing/);
    expect(error.message).toMatch(/reinstall Ahma, or in a checkout build @ahma\/core/);
    expect(error.message).toContain('--no-sandbox');
    // A missing file is no sign of a kernel without Landlock.
    expect(error.message).not.toContain('Landlock is unavailable');
  });

  it("R7.2: a package without this machine's helper names the target it looked for, the ones it has, and how to build one", async () => {
    const native = join(stateDir, 'native-without-this-target');
    await mkdir(join(native, 'linux-arm64'), { recursive: true });
    await writeFile(join(native, 'linux-arm64', 'ahma-sandbox'), '');
    const error = await refusal(
      sandbox({ helperPath: join(native, 'linux-riscv64', 'ahma-sandbox') }),
    );
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toContain(
      `no sandbox helper for this machine (linux-riscv64) in ${native}, which has linux-arm64`,
    );
    expect(error.message).toContain('pnpm install && pnpm build');
    expect(error.message).toContain('dist/native/linux-riscv64/ahma-sandbox');
    expect(error.message).not.toContain('Landlock is unavailable');
  });

  it('R7.2: a helper built for another architecture is named as such, not as a kernel without Landlock', async () => {
    const foreign = join(stateDir, 'foreign-helper');
    // An ELF header (64-bit, little-endian) whose e_machine is aarch64, or x86-64 on an arm64 host.
    const header = Buffer.alloc(64);
    header.writeUInt32BE(0x7f454c46, 0);
    header[4] = 2;
    header[5] = 1;
    header.writeUInt16LE(process.arch === 'x64' ? 183 : 62, 18);
    await writeFile(foreign, header);
    await chmod(foreign, 0o755);
    const error = await refusal(sandbox({ helperPath: foreign }));
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toContain(
      `the sandbox helper ${foreign} is not a program for this machine (${process.platform}-${process.arch})`,
    );
    expect(error.message).not.toContain('Landlock is unavailable');
  });

  it('R7.4: a helper reporting Landlock unavailable (exit 78) → SANDBOX_UNAVAILABLE with its reason', async () => {
    const fake = join(stateDir, 'fake-helper');
    await writeFile(
      fake,
      '#!/bin/sh\necho "ahma-sandbox: Landlock unavailable: Landlock is disabled at boot" >&2\nexit 78\n',
    );
    await chmod(fake, 0o755);
    const error = await refusal(sandbox({ helperPath: fake }));
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toContain('Landlock is disabled at boot');
    expect(error.message).toContain('lsm=');
  });

  it('R7.4: a helper of ours that lost its executable bits (unpacked without modes) gets them back and runs', async () => {
    const fake = join(stateDir, 'lost-its-mode');
    await writeFile(fake, '#!/bin/sh\necho landlock-abi=7\n');
    await chmod(fake, 0o644);
    const box = await sandbox({ helperPath: fake });
    expect(box.abi).toBe(7);
    expect((await stat(fake)).mode & 0o111).not.toBe(0);
  });

  it.runIf(process.getuid?.() === 0)(
    'R7.4: a helper not executable that this user cannot fix → SANDBOX_UNAVAILABLE with the chmod to run, not a kernel without Landlock',
    async () => {
      const fake = join(stateDir, 'not-executable');
      await writeFile(fake, '#!/bin/sh\necho landlock-abi=7\n');
      await chmod(fake, 0o644);
      await chown(fake, 65534, 65534);
      // Someone else's file: the server does not change it, it says how to.
      const error = await refusal(sandbox({ helperPath: fake }));
      expect(error.code).toBe('SANDBOX_UNAVAILABLE');
      expect(error.message).toContain(`the sandbox helper ${fake} is not executable (mode 0644)`);
      expect(error.message).toContain(`chmod 755 ${fake}`);
      expect(error.message).not.toContain('Landlock is unavailable');
    },
  );

  it.runIf(process.getuid?.() === 0)(
    'R7.6: running as root adds a warning saying what is still open',
    async () => {
      const box = await sandbox();
      expect(
        box.warnings.some((warning) => /root: commands hold no capabilities, but/.test(warning)),
      ).toBe(true);
      const kept = await sandbox({ keepCapabilities: true });
      expect(
        kept.warnings.some((warning) => /--keep-capabilities: commands hold root's/.test(warning)),
      ).toBe(true);
    },
  );

  it('R7.4: disabled:true (--no-sandbox) → mechanism none and a loud warning, still supervised', async () => {
    // No probe: even a missing Landlock must not stop a deliberately unconfined server…
    const box = await sandbox({ disabled: true });
    expect(box.mechanism).toBe('none');
    expect(box.abi).toBeUndefined();
    expect(box.warnings.some((warning) => /UNCONFINED/.test(warning))).toBe(true);
    // …but on Linux the helper still supervises the process tree.
    const line = box.wrap(['touch', join(stateDir, 'unconfined-write')]);
    expect(line.file).toBe(defaultHelperPath());
    expect(line.args).toContain('--unconfined');
    expect(line.args).not.toContain('--rw');
    expect(spawnSync(...wrapped(line)).status).toBe(0);
  });
});

describe('createEngine: the startup check', () => {
  it('R7.4: the engine refuses to start when the sandbox is unavailable', async () => {
    const error = await refusal(
      createEngine({ scope, stateDir, noShellPool: true, helperPath: join(stateDir, 'gone') }),
    );
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toContain('--no-sandbox');
  });

  it('R7.4: noSandbox runs commands unconfined, with the loud warning', async () => {
    const outside = await varTmpDir('outside');
    const engine = await createEngine({ scope, stateDir, noShellPool: true, noSandbox: true });
    try {
      expect(engine.sandbox.mechanism).toBe('none');
      expect(engine.sandbox.warnings.join('\n')).toMatch(/UNCONFINED/);
      const target = join(outside, 'written');
      const result = await engine.executor.run({
        command: { kind: 'argv', argv: ['touch', target] },
        cwd: scope,
        logName: 'unconfined',
      });
      expect(result.status).toBe('completed');
      expect(existsSync(target)).toBe(true);
    } finally {
      await engine.close();
      await removeAll([outside]);
    }
  });
});

describe('createSandbox on other platforms', () => {
  it("R7.4: platform 'win32' → SANDBOX_UNAVAILABLE mentioning WSL2", async () => {
    const error = await refusal(sandbox({ platform: 'win32' }));
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toContain('WSL2');
    expect(error.message).toContain('win32');
  });

  it("R7.3: platform 'darwin' → Seatbelt, wrap() starts with /usr/bin/sandbox-exec (no probe)", async () => {
    // A helper path that does not exist proves nothing Linux-specific is probed.
    const box = await sandbox({ platform: 'darwin', helperPath: join(stateDir, 'absent') });
    expect(box.mechanism).toBe('seatbelt');
    expect(box.abi).toBeUndefined();
    expect(box.poolCommand(2)).toBeUndefined();
    const line = box.wrap(['git', 'status', '--short']);
    expect(line.file).toBe(SANDBOX_EXEC);
    expect(line.file).toBe('/usr/bin/sandbox-exec');
    expect(line.args[0]).toBe('-p');
    expect(line.args.slice(-7)).toEqual([
      '/bin/sh',
      '-c',
      'exec "$@" 2>&1',
      'sh',
      'git',
      'status',
      '--short',
    ]);
    box.writable.forEach((path, index) =>
      expect(line.args).toContain(`WRITABLE_${String(index)}=${path}`),
    );
  });

  it("R7.4: platform 'darwin' with disabled:true runs through sh, merging stderr", async () => {
    const box = await sandbox({ platform: 'darwin', disabled: true });
    expect(box.mechanism).toBe('none');
    expect(box.wrap(['ls', '-l'])).toEqual({
      file: '/bin/sh',
      args: ['-c', 'exec "$@" 2>&1', 'sh', 'ls', '-l'],
    });
  });
});

function wrapped(line: { file: string; args: string[] }) {
  return [line.file, line.args, { cwd: scope, encoding: 'utf8' as const }] as const;
}
