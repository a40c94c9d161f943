// R15.4: `write_stdin`, the other half of a conversation with an interactive command (`pty: true`
// or `stdin: "open"`): writes the input, then returns what the command printed within `wait_ms`
// (sooner once it has printed something and fallen silent again). `cancel` still ends the command;
// one left without input or output for 10 minutes is ended by the server.
import { BUILTIN_TOOLS } from '@ahma/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { outputSchemaWithError } from '../calls/results.js';
import {
  NEVER_A_TASK,
  invalidArguments,
  refused,
  type ToolContext,
  type ToolEntry,
} from './tool.js';

const DEFAULT_WAIT_MS = 2000;
const MAX_WAIT_MS = 30_000;

const WRITE_STDIN: Tool = {
  name: BUILTIN_TOOLS.writeStdin,
  description:
    'Write to a running interactive command (one started with `pty: true` or `stdin: "open"`) and get what it printed next. Include "\\n" to press Enter. Returns after `wait_ms` at most, sooner once the command has answered and fallen silent.',
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'The operation id of the interactive command.' },
      input: {
        type: 'string',
        maxLength: 65536,
        description: 'What to type, e.g. "print(6*7)\\n" ("\\u0003" is Ctrl-C in a terminal).',
      },
      wait_ms: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_MS,
        description: `How long to listen for its answer (default ${String(DEFAULT_WAIT_MS)}).`,
      },
    },
    required: ['id', 'input'],
    additionalProperties: false,
  },
  outputSchema: outputSchemaWithError({
    type: 'object',
    properties: {
      id: { type: 'string' },
      output: { type: 'string' },
      ended: { type: 'boolean' },
      truncated: { type: 'boolean' },
    },
    required: ['id', 'output', 'ended'],
  }),
  execution: NEVER_A_TASK,
};

export function writeStdinTool(context: ToolContext): ToolEntry {
  return {
    tool: WRITE_STDIN,
    fromWords: ([id, ...rest]) => ({ id, input: `${rest.join(' ')}\n` }),
    async call(args) {
      const invalid = invalidArguments(context, WRITE_STDIN, args);
      if (invalid !== undefined) return invalid;
      const id = String(args['id']);
      const conversation = context.engine.executor.conversation(id);
      if (conversation === undefined) {
        const known = knownOperation(context, id);
        return refused(
          known === undefined
            ? `no operation ${id}`
            : known.status === 'running'
              ? `${id} is not interactive: start it with "pty": true or "stdin": "open" to write to it`
              : `${id} has ended (${known.status}); \`await\` gives its result`,
          known === undefined ? 'OPERATION_UNKNOWN' : 'ARGUMENTS_INVALID',
        );
      }
      const wait = typeof args['wait_ms'] === 'number' ? args['wait_ms'] : DEFAULT_WAIT_MS;
      let answer;
      try {
        answer = await conversation.send(String(args['input']), wait);
      } catch (error) {
        return refused(
          `${id}: ${error instanceof Error ? error.message : String(error)}`,
          'ARGUMENTS_INVALID',
        );
      }
      const said =
        answer.output === '' ? `(${id} printed nothing within ${String(wait)} ms)` : answer.output;
      const ended = answer.ended ? `\n(${id} has ended: \`await\` gives its result)` : '';
      return {
        kind: 'answer',
        result: {
          content: [{ type: 'text', text: `${said}${ended}` }],
          structuredContent: { id, ...answer },
        },
      };
    },
  };
}

/** The operation `id` names, or undefined when there is none (status throws for those). */
function knownOperation(context: ToolContext, id: string) {
  try {
    return context.engine.operations.status([id])[0];
  } catch {
    return undefined;
  }
}
