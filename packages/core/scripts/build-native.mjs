#!/usr/bin/env node
// Compiles the Linux sandbox exec helper (SPEC §4, R7.2) from every native/*.c (main() is in
// native/ahma-sandbox.c) into dist/native/ahma-sandbox, and the bash builtin native/bash/*.c (with
// the supervision and Landlock code it shares) into dist/native/ahma-unit.so, which the pool's
// template shell loads. Runs after tsup, which empties dist/ first.
//
// Static linking is tried first (a static binary adds ~0.1 ms per exec, a dynamic one ~0.7 ms);
// when the C library has no static archive (e.g. no libc.a / glibc-static installed), the helper
// is linked dynamically instead. `CC` overrides the compiler (default `cc`).
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
const outDir = join(packageDir, 'dist', 'native');
const output = join(outDir, 'ahma-sandbox');
const builtinOutput = join(outDir, 'ahma-unit.so');
const compiler = process.env.CC || 'cc';
const flags = ['-std=c11', '-O2', '-Wall', '-Wextra', '-Werror'];

const say = (line) => process.stdout.write(`build-native: ${line}\n`);
const fail = (line) => {
  process.stderr.write(`build-native: ${line}\n`);
  process.exit(1);
};

if (process.platform !== 'linux') {
  say(`skipped: the Landlock helper is Linux-only (this is ${process.platform})`);
  process.exit(0);
}

try {
  execFileSync(compiler, ['--version'], { stdio: 'ignore' });
} catch (error) {
  if (error.code === 'ENOENT') {
    fail(
      `C compiler '${compiler}' not found. The sandbox helper must be compiled from ` +
        `${relative(process.cwd(), source)}: install a C toolchain (Debian/Ubuntu: ` +
        `apt-get install gcc libc6-dev; Fedora: dnf install gcc glibc-static; Alpine: apk add ` +
        `build-base) or point CC at one.`,
    );
  }
  fail(`'${compiler} --version' failed: ${error.message}`);
}

mkdirSync(outDir, { recursive: true });
// Compile to a temporary name and rename: a concurrent reader never sees a half-written binary.
const temporary = `${output}.tmp-${process.pid}`;

const compile = (extra, files = sources, to = temporary) => {
  try {
    execFileSync(compiler, [...flags, ...extra, '-o', to, ...files], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return undefined;
  } catch (error) {
    rmSync(to, { force: true });
    const text = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    return text || error.message;
  }
};

const staticError = compile(['-static']);
let kind = 'static';
if (staticError !== undefined) {
  const dynamicError = compile([]);
  if (dynamicError !== undefined) {
    fail(
      `compiling ${relative(process.cwd(), source)} with '${compiler}' failed:\n${dynamicError}`,
    );
  }
  const firstLine = staticError.split('\n').find((line) => line.trim() !== '') ?? '';
  kind = `dynamic (static linking failed: ${firstLine.trim()})`;
}

chmodSync(temporary, 0o755);
renameSync(temporary, output);
say(`built ${relative(process.cwd(), output)}: ${kind}`);

// The builtin lives inside bash: only its entry point is exported, and its own calls bind to its
// own functions (-Bsymbolic), never to a bash function of the same name.
const builtinTemporary = `${builtinOutput}.tmp-${process.pid}`;
const builtinError = compile(
  ['-shared', '-fPIC', '-fvisibility=hidden', '-Wl,-Bsymbolic'],
  builtinSources,
  builtinTemporary,
);
if (builtinError !== undefined) {
  fail(`compiling ${relative(process.cwd(), builtinSources[0])} failed:\n${builtinError}`);
}
renameSync(builtinTemporary, builtinOutput);
say(`built ${relative(process.cwd(), builtinOutput)}`);
