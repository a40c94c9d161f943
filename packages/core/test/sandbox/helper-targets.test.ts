// The helpers a published @ahma/core ships (scripts/build-native.mjs): one static binary per
// target, each for its own architecture, and the one this machine cannot run natively (arm64 on
// an x64 machine) run under qemu-user. qemu 7.2 (Debian 12) implements neither Landlock nor
// seccomp for its guest, so there the arm64 helper must refuse — fail closed — rather than run
// the command unconfined; an emulator that implements Landlock must see it confine a write.
// The targets are built where their cross compiler is installed (.ci/run installs them and
// scripts/check-native.mjs refuses to pack without them); elsewhere these tests are skipped.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHelperIfStale } from '../support/sandbox-helper.js';

const nativeDir = fileURLToPath(new URL('../../dist/native', import.meta.url));
const TARGETS = [
  { target: 'linux-x64', machine: 62, qemu: 'qemu-x86_64' },
  { target: 'linux-arm64', machine: 183, qemu: 'qemu-aarch64' },
] as const;

const PT_INTERP = 3;

/** e_machine and whether a program interpreter (a dynamic loader) is named: ELF64 LE only. */
function elfFacts(path: string): { machine: number; dynamic: boolean } | undefined {
  const elf = readFileSync(path);
  const elf64le = elf.readUInt32BE(0) === 0x7f454c46 && elf[4] === 2 && elf[5] === 1;
  if (!elf64le) return undefined;
  const phoff = Number(elf.readBigUInt64LE(32));
  const phentsize = elf.readUInt16LE(54);
  const phnum = elf.readUInt16LE(56);
  let dynamic = false;
  for (let index = 0; index < phnum; index++) {
    if (elf.readUInt32LE(phoff + index * phentsize) === PT_INTERP) dynamic = true;
  }
  return { machine: elf.readUInt16LE(18), dynamic };
}

const installed = (program: string) =>
  spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).status === 0;

const host = `${process.platform}-${process.arch}`;
const hostHelper = join(nativeDir, host, 'ahma-sandbox');
const hostIsStatic = existsSync(hostHelper) && elfFacts(hostHelper)?.dynamic === false;
let scope = '';

describe.runIf(process.platform === 'linux')('the helpers of every shipped target', () => {
  beforeAll(async () => {
    buildHelperIfStale();
    scope = await mkdtemp('/var/tmp/ahma-targets-');
  }, 60_000);
  afterAll(() => rm(scope, { recursive: true, force: true }));

  for (const { target, machine, qemu } of TARGETS) {
    const helper = join(nativeDir, target, 'ahma-sandbox');
    const built = existsSync(helper);

    it.runIf(built)(
      `R7.2: the ${target} helper is a static ELF for its architecture, with its builtin beside it`,
      () => {
        const facts = elfFacts(helper);
        expect(facts?.machine).toBe(machine);
        // Static: it runs on glibc and musl systems alike, with no loader or library to find (a
        // checkout's own build may fall back to dynamic linking; a cross-built one never does).
        if (target !== host) expect(facts?.dynamic).toBe(false);
        expect(elfFacts(join(nativeDir, target, 'ahma-unit.so'))?.machine).toBe(machine);
      },
    );

    const emulated = built && target !== host && installed(qemu);
    it.runIf(emulated)(
      `R7.2: the ${target} helper runs under ${qemu}: its usage errors, and no command without its confinement`,
      () => {
        const usage = spawnSync(qemu, [helper, '--frobnicate', '--', 'true'], { encoding: 'utf8' });
        expect(usage.status).toBe(125);
        expect(usage.stderr).toContain("unknown argument '--frobnicate'");

        const probe = spawnSync(qemu, [helper, '--probe'], { encoding: 'utf8' });
        const marker = join(scope, `${target}-ran`);
        const outside = join(scope, '..', `ahma-targets-outside-${process.pid}`);
        const confined = spawnSync(
          qemu,
          [helper, '--read-all', '--rw', scope, '--', 'sh', '-c', `touch ${marker} ${outside}`],
          { encoding: 'utf8' },
        );
        if (probe.status === 78) {
          // The emulator offers no Landlock: the helper says so and runs nothing (qemu 7.2 already
          // refuses an earlier step, the child subreaper: exit 125, the helper's own failure).
          expect(probe.stderr).toContain('Landlock unavailable');
          expect([78, 125]).toContain(confined.status);
          expect(confined.stderr).toMatch(/^ahma-sandbox: /);
          expect(existsSync(marker)).toBe(false);
        } else {
          expect(probe.stdout).toMatch(/^landlock-abi=\d+$/m);
          expect(existsSync(marker)).toBe(true);
        }
        // Either way, nothing is written outside the scope.
        expect(existsSync(outside)).toBe(false);
      },
    );
  }

  it.runIf(process.getuid?.() === 0 && hostIsStatic)(
    'R7.2: the helper needs no C library: it runs in a root holding nothing but itself (glibc, musl or none)',
    async () => {
      const root = await mkdtemp('/var/tmp/ahma-bare-root-');
      try {
        await copyFile(hostHelper, join(root, 'ahma-sandbox'));
        await chmod(join(root, 'ahma-sandbox'), 0o755);
        const probe = spawnSync('chroot', [root, '/ahma-sandbox', '--probe'], { encoding: 'utf8' });
        expect(probe.stderr).toBe('');
        expect(probe.status).toBe(0);
        expect(probe.stdout).toMatch(/^landlock-abi=\d+$/m);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  );

  it('R7.2: this machine has a helper of its own target', () => {
    expect(existsSync(join(nativeDir, host, 'ahma-sandbox'))).toBe(true);
    expect(
      execFileSync(join(nativeDir, host, 'ahma-sandbox'), ['--probe'], { encoding: 'utf8' }),
    ).toMatch(/^landlock-abi=\d+$/m);
  });
});
