// Runs ahma-list-tools in this process: the same runListTools the binary calls, with the
// environment and both output streams passed in instead of taken from the process. The servers it
// lists stay real (spawned over stdio, or listening over HTTP); only the binary itself is spawned
// by test/e2e alone.
import { readFileSync } from 'node:fs';
import { runListTools } from '../../src/run.js';

export const packageJson = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * ahma-list-tools ARGS with `env`; what it printed, its exit status and how long it took.
 * `onStderr` sees stderr as it is written (a login URL, say).
 */
export async function listTools(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  onStderr: (stderr: string) => void = () => undefined,
): Promise<Run> {
  const started = Date.now();
  let stdout = '';
  let stderr = '';
  const code = await runListTools(args, {
    env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
      onStderr(stderr);
    },
  });
  return { code, stdout, stderr, ms: Date.now() - started };
}

/** A listing in --format json. */
export interface JsonListing {
  server: { name: string; version: string; instructions?: string };
  tools: {
    name: string;
    description: string | null;
    parameters: { name: string; type: string; required: boolean; description: string | null }[];
    inputSchema: { type: 'object'; properties?: Record<string, unknown> };
    outputSchema?: Record<string, unknown>;
  }[];
}

const toolHeader = /^[^\s].* — |^[\w-]+$/;

/** The tool names of a text listing (the unindented lines between the header and the count). */
export function toolNames(text: string): string[] {
  const lines = text.trimEnd().split('\n').slice(1, -1);
  return lines
    .filter((line) => line !== '' && !line.startsWith(' ') && !line.startsWith('instructions: '))
    .filter((line) => toolHeader.test(line))
    .map((line) => line.split(' — ')[0] ?? line);
}
