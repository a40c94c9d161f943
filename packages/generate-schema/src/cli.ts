// generate-tool-schema's entry point: parse, run, set the exit code. Everything else is in run.ts.
import { runGenerateSchema } from './run.js';

process.exitCode = await runGenerateSchema(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
