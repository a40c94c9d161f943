// ahma-introspect's entry point: run, set the exit code. Everything else is in run-cli.ts.
import { runIntrospect } from './run-cli.js';

process.exitCode = await runIntrospect(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
