// ahma-list-tools's entry point: parse, run, set the exit code. Everything else is in run.ts.
import { runListTools } from './run.js';

process.exitCode = await runListTools(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
