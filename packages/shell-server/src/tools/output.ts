// R15.3: `output`, the whole output of an operation a window at a time, also while it runs. A
// result whose output was cut keeps its head and tail; the rest is in the operation's full-output
// log, and this tool reads any part of it: a byte window (a negative offset counts from the end),
// the last lines, or the lines matching a regular expression with their line numbers. The reading
// itself is core's (process/output-reader.ts); here the operation's id becomes a source: a
// finished result's log, or its output when it was not cut; a running command's log or the bytes
// its collector holds (Executor.liveOutput).
import {
  AhmaError,
  BUILTIN_TOOLS,
  GREP_DEFAULT_MATCHES,
  GREP_MAX_CONTEXT,
  GREP_MAX_MATCHES,
  grepOutput,
  liveSource,
  logNameParts,
  OUTPUT_TAIL_MAX_LINES,
  OUTPUT_WINDOW_DEFAULT_BYTES,
  OUTPUT_WINDOW_MAX_BYTES,
  readByteWindow,
  readTail,
  type Engine,
  type OperationSnapshot,
  type OutputSource,
} from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { outputSchemaWithError } from '../calls/results.js';
import {
  NEVER_A_TASK,
  invalidArguments,
  isRefusal,
  refused,
  refusing,
  type Refusal,
  type ToolContext,
  type ToolEntry,
  type ToolOutcome,
} from './tool.js';

/**
 * How long a call waits for an operation that runs but has no command running right now (it is
 * starting, between two sequence steps, or just finishing) before it answers with no output yet.
 */
const SETTLE_MS = 1000;

const OUTPUT: Tool = {
  name: BUILTIN_TOOLS.output,
  description:
    "Read an operation's whole output, also while it still runs (to follow its progress): a byte window (`offset`, negative from the end; `length`), the last lines (`tail`), or the lines matching a regular expression (`grep`) with their line numbers and `context`. Use it when a result's output was cut.",
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'The operation id (as `status` and `await` take).' },
      step: {
        type: 'integer',
        minimum: 1,
        description:
          "A sequence's step (1-based): that step's own output. Default: the running step while the sequence runs, its transcript once it has finished.",
      },
      offset: {
        type: 'integer',
        description:
          'Byte offset of the window; negative counts from the end (-4000: the last 4000 bytes). Default 0.',
      },
      length: {
        type: 'integer',
        minimum: 1,
        maximum: OUTPUT_WINDOW_MAX_BYTES,
        description: `Bytes in the window (default ${String(OUTPUT_WINDOW_DEFAULT_BYTES)}).`,
      },
      tail: {
        type: 'integer',
        minimum: 1,
        maximum: OUTPUT_TAIL_MAX_LINES,
        description: 'Instead of a byte window: the last N lines.',
      },
      grep: {
        type: 'string',
        description:
          'Instead of a window: the lines matching this regular expression (JavaScript syntax, no delimiters), with their 1-based line numbers.',
      },
      context: {
        type: 'integer',
        minimum: 0,
        maximum: GREP_MAX_CONTEXT,
        description: 'With grep: lines shown before and after each match (default 0).',
      },
      max_matches: {
        type: 'integer',
        minimum: 1,
        maximum: GREP_MAX_MATCHES,
        description: `With grep: matches shown at most (default ${String(GREP_DEFAULT_MATCHES)}); all are counted.`,
      },
    },
    required: ['id'],
    additionalProperties: false,
  },
  outputSchema: outputSchemaWithError({
    type: 'object',
    properties: {
      id: { type: 'string', description: 'The operation id.' },
      tool: { type: 'string' },
      step: { type: 'integer' },
      status: {
        type: 'string',
        enum: ['running', 'completed', 'failed', 'timed_out', 'cancelled'],
        description: 'How the operation stands.',
      },
      running: { type: 'boolean' },
      source: {
        type: 'string',
        enum: ['log', 'result', 'memory'],
        description:
          "log: the full-output log; result: the result's output (it was not cut); memory: what a running command's output has kept so far.",
      },
      complete: {
        type: 'boolean',
        description: 'The source holds the whole output (so far).',
      },
      total_bytes: { type: 'integer', description: 'The size of the source now.' },
      mode: { type: 'string', enum: ['bytes', 'tail', 'grep'] },
      start: { type: 'integer', description: 'bytes, tail: first byte of the window.' },
      end: { type: 'integer', description: 'bytes, tail: the byte after the window.' },
      lines: { type: 'integer', description: 'tail: lines returned.' },
      first_line: { type: 'integer', description: 'tail: the first line’s number, when known.' },
      matches: { type: 'integer', description: 'grep: matching lines in all.' },
      shown: { type: 'integer', description: 'grep: matching lines shown.' },
      lines_searched: { type: 'integer' },
      searched_all: {
        type: 'boolean',
        description: 'grep: false when the time limit stopped the search early.',
      },
      text: { type: 'string', description: 'What was read, terminal escapes removed.' },
    },
    required: ['id', 'tool', 'status', 'running', 'source', 'mode', 'text'],
  }),
  execution: NEVER_A_TASK,
};

/** What a call reads from: the operation, and where its output is. */
interface Located {
  readonly snapshot: OperationSnapshot;
  readonly step: number | undefined;
  readonly source: OutputSource;
  readonly kind: 'log' | 'result' | 'memory';
  /** The source holds the whole output (so far). */
  readonly complete: boolean;
  readonly running: boolean;
  /** Why there is nothing (yet) to read, or what the source lacks. */
  readonly note: string | undefined;
}

type Mode =
  | { readonly kind: 'bytes'; readonly offset: number; readonly length: number }
  | { readonly kind: 'tail'; readonly lines: number }
  | {
      readonly kind: 'grep';
      readonly pattern: string;
      readonly context: number;
      readonly maxMatches: number;
    };

export function outputTool(context: ToolContext): ToolEntry {
  return {
    tool: OUTPUT,
    fromWords: (words) => (words[0] === undefined ? {} : { id: words[0] }),
    call: (args) =>
      refusing(async () => {
        const invalid = invalidArguments(context, OUTPUT, args);
        if (invalid !== undefined) return invalid;
        const mode = modeOf(args);
        if (isRefusal(mode)) return mode;
        const id = String(args['id']);
        const step = typeof args['step'] === 'number' ? args['step'] : undefined;
        return read(context.engine, id, step, mode);
      }),
  };
}

function modeOf(args: Record<string, unknown>): Mode | Refusal {
  const number = (name: string) =>
    typeof args[name] === 'number' ? (args[name] as number) : undefined;
  const given = (names: readonly string[]) => names.filter((name) => args[name] !== undefined);
  const grep = typeof args['grep'] === 'string' ? args['grep'] : undefined;
  const tail = number('tail');
  const grepOnly = given(['context', 'max_matches']);
  if (grep !== undefined) {
    const others = given(['offset', 'length', 'tail']);
    if (others.length > 0) return notTogether('grep', others);
    return {
      kind: 'grep',
      pattern: grep,
      context: number('context') ?? 0,
      maxMatches: number('max_matches') ?? GREP_DEFAULT_MATCHES,
    };
  }
  if (grepOnly.length > 0) {
    return refused(
      `${grepOnly.join(' and ')} ${grepOnly.length === 1 ? 'goes' : 'go'} only with grep`,
      'ARGUMENTS_INVALID',
    );
  }
  if (tail !== undefined) {
    const others = given(['offset', 'length']);
    return others.length > 0 ? notTogether('tail', others) : { kind: 'tail', lines: tail };
  }
  return {
    kind: 'bytes',
    offset: number('offset') ?? 0,
    length: number('length') ?? OUTPUT_WINDOW_DEFAULT_BYTES,
  };
}

const notTogether = (mode: string, others: readonly string[]) =>
  refused(
    `${mode} cannot be combined with ${others.join(' or ')}: ask for a byte window (offset, length), the last lines (tail) or matching lines (grep)`,
    'ARGUMENTS_INVALID',
  );

async function read(
  engine: Engine,
  id: string,
  step: number | undefined,
  mode: Mode,
): Promise<ToolOutcome> {
  // A running command's log may go as it ends (a log the cleaned output did not need): once more,
  // from the result then.
  for (let attempt = 0; ; attempt++) {
    const located = await locate(engine, id, step);
    if (isRefusal(located)) return located;
    try {
      return { kind: 'answer', result: await answer(located, mode) };
    } catch (error) {
      if (error instanceof AhmaError || !(error instanceof Error)) throw error;
      if (!isGone(error)) {
        return refused(
          `The output of ${describeId(id, located.step)} could not be read: ${error.message}`,
          'OUTPUT_UNAVAILABLE',
        );
      }
      if (located.running && attempt === 0) continue;
      return gone(engine, id, located.step);
    }
  }
}

const isGone = (error: unknown) =>
  error instanceof Error && (error as NodeJS.ErrnoException).code === 'ENOENT';

function gone(engine: Engine, id: string, step: number | undefined): Refusal {
  return refused(
    `The whole output of ${describeId(id, step)} is no longer available: its log was deleted (output logs are kept within a ${engine.logs.describeBudget()} disk budget, oldest first) or could not be kept. Its result (\`status\` or \`await\`) still shows the start and the end.`,
    'OUTPUT_UNAVAILABLE',
  );
}

const describeId = (id: string, step: number | undefined) =>
  step === undefined ? id : `step ${String(step)} of ${id}`;

/** Where the operation's output (or its step's) can be read now. */
async function locate(
  engine: Engine,
  id: string,
  step: number | undefined,
): Promise<Located | Refusal> {
  let [snapshot] = engine.operations.status([id]); // refuses an unknown id
  if (snapshot === undefined) return refused(`no operation ${id}`, 'OPERATION_UNKNOWN');
  if (snapshot.status === 'running') {
    const live = engine.executor.liveOutput(step === undefined ? id : `${id}-step${String(step)}`);
    if (live !== undefined) {
      const { source, complete } = liveSource(live);
      return {
        snapshot,
        step: step ?? logNameParts(live.logName).step,
        source,
        kind: source.kind === 'file' ? 'log' : 'memory',
        complete,
        running: true,
        note: complete
          ? undefined
          : 'the log of this output was not kept, so its middle is missing (only its start and end are held)',
      };
    }
    // Nothing runs under that name right now: the operation is starting, between two steps of a
    // sequence, or finishing. A moment settles most of these.
    [snapshot] = await engine.operations.await([id], SETTLE_MS);
    if (snapshot === undefined) return refused(`no operation ${id}`, 'OPERATION_UNKNOWN');
    if (snapshot.status === 'running') {
      return {
        snapshot,
        step,
        source: { kind: 'bytes', bytes: Buffer.alloc(0) },
        kind: 'memory',
        complete: true,
        running: true,
        note:
          step === undefined
            ? 'no command of it is running at this moment (it is starting, or between steps): no output yet'
            : `step ${String(step)} is not running now; a sequence's finished steps can be read once the whole sequence has finished`,
      };
    }
  }
  const result = snapshot.result;
  if (result === undefined) return refused(`no operation ${id}`, 'OPERATION_UNKNOWN');
  const finished = { snapshot, running: false } as const;
  if (step !== undefined) {
    const steps = result.steps;
    if (steps === undefined) {
      return refused(`${id} is not a sequence: it has no steps`, 'ARGUMENTS_INVALID');
    }
    const record = steps[step - 1];
    if (record === undefined) {
      return refused(
        `${id} has ${String(steps.length)} step${steps.length === 1 ? '' : 's'}`,
        'ARGUMENTS_INVALID',
      );
    }
    if (record.fullOutputPath !== undefined) {
      return { ...finished, step, ...fromLog(record.fullOutputPath) };
    }
    if (record.truncated) return gone(engine, id, step);
    return { ...finished, step, ...fromText(record.output, true) };
  }
  if (result.fullOutputPath !== undefined) {
    return { ...finished, step, ...fromLog(result.fullOutputPath) };
  }
  if (result.steps !== undefined) {
    // A sequence's transcript: its steps' outputs as the result shows them.
    const cut = result.steps.filter((record) => record.truncated).map((record) => record.step);
    return {
      ...finished,
      step,
      ...fromText(result.output, !result.truncated),
      note:
        cut.length === 0
          ? undefined
          : `the transcript shows the steps' outputs as cut; a step's whole output: \`step\` (${cut.map(String).join(', ')})`,
    };
  }
  if (result.truncated) return gone(engine, id, undefined);
  return { ...finished, step, ...fromText(result.output, true) };
}

const fromLog = (path: string) =>
  ({ source: { kind: 'file', path }, kind: 'log', complete: true, note: undefined }) as const;

const fromText = (text: string, complete: boolean) =>
  ({
    source: { kind: 'bytes', bytes: Buffer.from(text, 'utf8') },
    kind: 'result',
    complete,
    note: undefined,
  }) as const;

/** Reads the window and says what it is. */
async function answer(located: Located, mode: Mode): Promise<CallToolResult> {
  const { snapshot, step, source } = located;
  const base = {
    // `id`, not `operation_id`: a result naming an `operation_id` counts as handing that
    // operation's result over (piggyback.ts), and a window of its output does not.
    id: snapshot.id,
    tool: snapshot.tool,
    ...(step === undefined ? {} : { step }),
    status: located.running ? 'running' : snapshot.status,
    running: located.running,
    source: located.kind,
    complete: located.complete,
    mode: mode.kind,
  };
  let structured: Record<string, unknown>;
  let window: string;
  let empty: string;
  switch (mode.kind) {
    case 'bytes': {
      const read = await readByteWindow(source, mode.offset, mode.length);
      structured = {
        total_bytes: read.totalBytes,
        start: read.start,
        end: read.end,
        text: read.text,
      };
      const more =
        read.end < read.totalBytes ? ` (next: offset ${String(read.end)})` : ' (to the end)';
      window = `bytes ${String(read.start)}..${String(read.end)} of ${String(read.totalBytes)}${more}`;
      empty = '(nothing in this window)';
      break;
    }
    case 'tail': {
      const read = await readTail(source, mode.lines);
      structured = {
        total_bytes: read.totalBytes,
        start: read.start,
        end: read.end,
        lines: read.lines,
        ...(read.firstLine === undefined ? {} : { first_line: read.firstLine }),
        text: read.text,
      };
      const which =
        read.firstLine === undefined
          ? `the last ${plural(read.lines, 'line')}`
          : `lines ${String(read.firstLine)}..${String(read.firstLine + read.lines - 1)} (all of them)`;
      const capped = read.capped
        ? `, cut at ${String(OUTPUT_WINDOW_MAX_BYTES)} bytes (long lines)`
        : '';
      window = `${which}${capped}, bytes ${String(read.start)}..${String(read.end)} of ${String(read.totalBytes)}`;
      empty = '(no output)';
      break;
    }
    case 'grep': {
      const found = await grepOutput(source, {
        pattern: mode.pattern,
        context: mode.context,
        maxMatches: mode.maxMatches,
      });
      structured = {
        total_bytes: found.bytesSearched,
        matches: found.matches,
        shown: found.shown,
        lines_searched: found.linesSearched,
        searched_all: found.complete,
        text: found.text,
      };
      const shown =
        found.shown === found.matches
          ? plural(found.matches, 'matching line')
          : `${String(found.shown)} of ${plural(found.matches, 'matching line')} shown (${found.shown < mode.maxMatches ? `the ${String(OUTPUT_WINDOW_MAX_BYTES)}-byte bound` : 'max_matches'})`;
      const searched = found.complete
        ? `${plural(found.linesSearched, 'line')} searched`
        : `only the first ${plural(found.linesSearched, 'line')} (${String(found.bytesSearched)} bytes) searched within the time limit: narrow the pattern`;
      window = `${shown} for /${mode.pattern}/, ${searched}`;
      empty = '(no line matches)';
      break;
    }
  }
  const text = String(structured['text']);
  const header = `${describeId(snapshot.id, step)} (${snapshot.tool}, ${located.running ? 'still running' : snapshot.status}): ${window}, from ${sourceText(located)}.${located.note === undefined ? '' : ` Note: ${located.note}.`}`;
  return {
    content: [{ type: 'text', text: `${header}\n${text === '' ? empty : text}` }],
    structuredContent: { ...base, ...structured },
    isError: false,
  };
}

function sourceText(located: Located): string {
  switch (located.kind) {
    case 'log':
      return located.running ? 'its full output log so far' : 'its full output log';
    case 'result':
      return located.complete ? "the result's output (it was not cut)" : "the result's output";
    case 'memory':
      return located.complete ? 'its output so far' : 'the start and end of its output so far';
  }
}

const plural = (count: number, noun: string) => `${String(count)} ${noun}${count === 1 ? '' : 's'}`;
