// ahma-shell's entry point: the only reader of process.env, argv, cwd and the terminal; the
// command line itself is run.ts.
import { runAhmaShell } from './run.js';

process.exitCode = await runAhmaShell(process.argv.slice(2), process.env, process.cwd(), {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stdinIsTerminal: process.stdin.isTTY === true,
  stderrIsTerminal: process.stderr.isTTY === true,
});
