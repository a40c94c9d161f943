#!/usr/bin/env node
// Every package's `prepack` (pnpm pack and pnpm publish run it in the package's directory): what
// the tarball must carry that git does not hold. The license is copied from the repository root.
// The package must be built (dist/). And @ahma/core ships a sandbox helper for every target its
// publishConfig.executableFiles names (scripts/build-native.mjs): each an ELF for its own
// architecture, statically linked (so glibc and musl systems run the same file), executable —
// a package without one would install, then refuse every command on that machine.
//
//   node ../../scripts/prepack.mjs   (from packages/NAME)
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packageDir = process.cwd();
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const problems = [];

copyFileSync(join(root, 'LICENSE'), join(packageDir, 'LICENSE'));
for (const built of ['index.js', 'index.d.ts']) {
  if (!existsSync(join(packageDir, 'dist', built))) {
    problems.push(`dist/${built} is missing: run pnpm build first (it makes both)`);
  }
}

/** ELF e_machine of each target directory name's architecture. */
const MACHINES = { x64: 62, arm64: 183 };
const PT_INTERP = 3;

for (const path of manifest.publishConfig?.executableFiles ?? []) {
  const file = join(packageDir, path);
  const arch = /native\/linux-([a-z0-9]+)\//.exec(path)?.[1];
  if (!existsSync(file)) {
    problems.push(
      `${path} is missing: build it with its cross compiler installed (Debian: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross, or gcc-x86-64-linux-gnu libc6-dev-amd64-cross), then pnpm build`,
    );
    continue;
  }
  if ((statSync(file).mode & 0o111) === 0) problems.push(`${path} is not executable`);
  const elf = readFileSync(file);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) {
    problems.push(`${path} is not a 64-bit little-endian ELF file`);
    continue;
  }
  if (arch !== undefined && elf.readUInt16LE(18) !== MACHINES[arch]) {
    problems.push(`${path} is not built for ${arch} (e_machine ${elf.readUInt16LE(18)})`);
  }
  const phoff = Number(elf.readBigUInt64LE(32));
  const phentsize = elf.readUInt16LE(54);
  for (let index = 0; index < elf.readUInt16LE(56); index++) {
    if (elf.readUInt32LE(phoff + index * phentsize) === PT_INTERP) {
      problems.push(`${path} is linked dynamically: install the static C library (libc.a)`);
    }
  }
}

for (const problem of problems) process.stderr.write(`prepack ${manifest.name}: ${problem}\n`);
process.exit(problems.length === 0 ? 0 : 1);
