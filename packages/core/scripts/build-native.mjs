#!/usr/bin/env node
// Compiles the Linux sandbox exec helper (SPEC §4, R7.2) from every native/*.c (main() is in
// native/ahma-sandbox.c) into dist/native/<target>/ahma-sandbox, and the bash builtin
// native/bash/*.c (with the supervision and Landlock code it shares) into
// dist/native/<target>/ahma-unit.so, which the pool's template shell loads. Runs after tsup, which
// empties dist/ first. <target> is `linux-<arch>` as Node names the architecture (linux-x64,
// linux-arm64): the server picks the directory of the machine it runs on (src/sandbox/helper-binary.ts).
//
// This machine's target is always built, with `CC` (default `cc`); the other shipped targets are
// built when their cross compiler is installed (Debian: gcc-aarch64-linux-gnu with
// libc6-dev-arm64-cross, gcc-x86-64-linux-gnu with libc6-dev-amd64-cross), or the compiler `CC_<TARGET>`
// names (CC_LINUX_ARM64=…). A published package carries them all (scripts/check-native.mjs).
//
// Helpers are linked statically: a static binary runs on any Linux of its architecture, glibc or
// musl, with no library to find, and adds ~0.1 ms per exec where a dynamic one adds ~0.7 ms. Only
// this machine's own build falls back to dynamic linking when the C library has no static archive
// (no libc.a / glibc-static), so a checkout builds everywhere.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const nativeDir = join(packageDir, 'native');
// Named in messages: the file with main() and the overview of the others.
const source = join(nativeDir, 'ahma-sandbox.c');
// Sorted, so the command line (and the link order) does not depend on the directory's order.
const sources = readdirSync(nativeDir)
  .filter((name) => name.endsWith('.c'))
  .sort()
  .map((name) => join(nativeDir, name));
const builtinSources = [
  ...readdirSync(join(nativeDir, 'bash'))
    .filter((name) => name.endsWith('.c'))
    .sort()
    .map((name) => join(nativeDir, 'bash', name)),
  ...['supervise.c', 'common.c', 'landlock.c'].map((name) => join(nativeDir, name)),
];
// Stripped (-s): the symbols only make the package bigger.
const flags = ['-std=c11', '-O2', '-s', '-Wall', '-Wextra', '-Werror'];

/** The targets a published @ahma/core ships, and the cross compiler Debian names for each. */
const SHIPPED = [
  { target: 'linux-x64', cross: 'x86_64-linux-gnu-gcc' },
  { target: 'linux-arm64', cross: 'aarch64-linux-gnu-gcc' },
];

const say = (line) => process.stdout.write(`build-native: ${line}\n`);
const fail = (line) => {
  process.stderr.write(`build-native: ${line}\n`);
  process.exit(1);
};

if (process.platform !== 'linux') {
  say(`skipped: the Landlock helper is Linux-only (this is ${process.platform})`);
  process.exit(0);
}

const hostTarget = `linux-${process.arch}`;
const overrideFor = (target) => process.env[`CC_${target.replaceAll('-', '_').toUpperCase()}`];

const runs = (compiler) => {
  try {
    execFileSync(compiler, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Compiles files into `to` (through a temporary name); the compiler's complaint on failure. */
const compile = (compiler, extra, files, to) => {
  // A concurrent reader (a test, a running server) never sees a half-written binary.
  const temporary = `${to}.tmp-${process.pid}`;
  try {
    execFileSync(compiler, [...flags, ...extra, '-o', temporary, ...files], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    renameSync(temporary, to);
    return undefined;
  } catch (error) {
    rmSync(temporary, { force: true });
    const text = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    return text || error.message;
  }
};

function build(target, compiler, isHost) {
  const outDir = join(packageDir, 'dist', 'native', target);
  const helper = join(outDir, 'ahma-sandbox');
  const builtin = join(outDir, 'ahma-unit.so');
  mkdirSync(outDir, { recursive: true });
  const staticError = compile(compiler, ['-static'], sources, helper);
  let kind = 'static';
  if (staticError !== undefined) {
    const dynamicError = isHost ? compile(compiler, [], sources, helper) : staticError;
    if (dynamicError !== undefined) {
      fail(
        `compiling ${relative(process.cwd(), source)} for ${target} with '${compiler}' failed:\n${dynamicError}`,
      );
    }
    const firstLine = staticError.split('\n').find((line) => line.trim() !== '') ?? '';
    kind = `dynamic (static linking failed: ${firstLine.trim()})`;
  }
  chmodSync(helper, 0o755);
  say(`built ${relative(process.cwd(), helper)}: ${kind}`);

  // The builtin lives inside bash: only its entry point is exported, and its own calls bind to its
  // own functions (-Bsymbolic), never to a bash function of the same name. Built for glibc: a musl
  // bash cannot load it, and the pool then starts a shell per unit (template.c says so).
  const builtinError = compile(
    compiler,
    ['-shared', '-fPIC', '-fvisibility=hidden', '-Wl,-Bsymbolic'],
    builtinSources,
    builtin,
  );
  if (builtinError !== undefined) {
    fail(
      `compiling ${relative(process.cwd(), builtinSources[0])} for ${target} failed:\n${builtinError}`,
    );
  }
  say(`built ${relative(process.cwd(), builtin)}`);
}

const hostCompiler = process.env.CC || overrideFor(hostTarget) || 'cc';
if (!runs(hostCompiler)) {
  fail(
    `C compiler '${hostCompiler}' not found. The sandbox helper must be compiled from ` +
      `${relative(process.cwd(), source)}: install a C toolchain (Debian/Ubuntu: ` +
      `apt-get install gcc libc6-dev; Fedora: dnf install gcc glibc-static; Alpine: apk add ` +
      `build-base) or point CC at one.`,
  );
}
build(hostTarget, hostCompiler, true);

for (const { target, cross } of SHIPPED) {
  if (target === hostTarget) continue;
  const compiler = overrideFor(target) || cross;
  if (runs(compiler)) build(target, compiler, false);
  else say(`${target} skipped: no cross compiler '${compiler}' (a published package needs it)`);
}
