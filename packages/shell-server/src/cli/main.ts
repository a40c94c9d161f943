// ahma-shell's entry point: the only reader of process.env, argv, cwd and the terminal (and, in
// a spare, of the scope's line on stdin); the command line itself is run.ts.
import { packageClosure, probeAhead } from '@ahma/core';
import { readScopeLine, SCOPE_FROM_STDIN } from '../isolation/spare-scope.js';
import { packageDirectory } from '../package.js';
import { runAhmaShell } from './run.js';

let argv = process.argv.slice(2);
let cwd = process.cwd();
// An isolated session's process started ahead (isolation/spare-scope.ts): the HTTP server names
// its scope on stdin once a session takes it. Meanwhile it does what its start needs and no scope
// decides, which core keeps for the process: the package closure (for the install check) and the
// helper's answer whether Landlock works; then it collects the garbage of loading its code (the
// server starts it with --expose-gc), which the session's start would otherwise wait for.
if (argv.at(-1) === SCOPE_FROM_STDIN) {
  packageClosure(packageDirectory());
  await probeAhead();
  (globalThis as { gc?: () => void }).gc?.();
  const scope = await readScopeLine(process.stdin).catch((error: unknown) => {
    process.stderr.write(`ahma-shell: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  });
  // Stopped before a session took it.
  if (scope === undefined) process.exit(0);
  try {
    process.chdir(scope);
  } catch (error) {
    process.stderr.write(`ahma-shell: cannot enter the scope ${scope}: ${String(error)}\n`);
    process.exit(1);
  }
  argv = [...argv.slice(0, -1), '--sandbox-scope', scope];
  cwd = scope;
}

process.exitCode = await runAhmaShell(argv, process.env, cwd, {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stdinIsTerminal: process.stdin.isTTY === true,
  stderrIsTerminal: process.stderr.isTTY === true,
});
