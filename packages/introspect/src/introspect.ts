// A program's tool file from its help: read it confined (run/), walk its subcommands, write MTDF.
import { realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeDefinition, type WrittenDefinition } from './mtdf/write.js';
import { SandboxedHelp, type SandboxedHelpOptions } from './run/sandboxed-help.js';
import { walkHelp, type Discovered } from './run/walk.js';

export interface IntrospectOptions extends SandboxedHelpOptions {
  /** Levels of subcommands to read (default 2). */
  readonly depth?: number;
  /** The tool file's `name` (default: the program's base name). */
  readonly name?: string;
  /**
   * Gives the introspection up (a server closing while it reads a program's help): the help
   * running is stopped and the promise rejects with the signal's reason.
   */
  readonly signal?: AbortSignal;
}

export interface Introspection extends WrittenDefinition {
  readonly discovered: Discovered;
}

export async function introspect(
  program: string,
  options: IntrospectOptions = {},
): Promise<Introspection> {
  // A program named by its path may lie where commands read nothing (a build directory, /opt):
  // its own directory is made readable, as the person named it.
  const readable = [
    ...(options.readable ?? []),
    ...(program.includes('/') ? [dirname(await realpath(program))] : []),
  ];
  const { signal } = options;
  signal?.throwIfAborted();
  const help = await SandboxedHelp.start({ ...options, readable });
  // Closing the engine cancels the help command running now; the next run is never started.
  const stop = () => void help.close();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const discovered = await walkHelp(program, {
      ...(options.depth === undefined ? {} : { depth: options.depth }),
      run: (file, args) => {
        signal?.throwIfAborted();
        return help.run(file, args);
      },
    });
    signal?.throwIfAborted();
    return { discovered, ...writeDefinition(discovered, program, options.name) };
  } finally {
    signal?.removeEventListener('abort', stop);
    await help.close();
  }
}
