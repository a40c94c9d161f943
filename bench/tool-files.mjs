// The benchmarks' tools directory: ten small definitions (20 tools), so a server loads and
// validates a realistic one, and tools/list answers what a typical project's would.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes the ten definitions into `dir`, creating it. */
export function writeBenchTools(dir) {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 10; i++) {
    writeFileSync(
      join(dir, `tool${i}.json`),
      JSON.stringify({
        name: `tool${i}`,
        description: `Benchmark tool ${i}`,
        command: 'echo',
        subcommand: [
          {
            name: 'run',
            description: 'Echo words.',
            synchronous: true,
            positional_args: [{ name: 'words', type: 'array', items: { type: 'string' } }],
          },
          {
            name: 'check',
            description: 'Echo a flag.',
            options: [{ name: 'verbose', type: 'boolean' }],
          },
        ],
      }),
    );
  }
}
