// The input schema pieces add_command and update_command share: a command's name, its executable,
// its arguments (in the order they are passed) and its settings.
import { ARGUMENT_TYPES } from '@ahma/core';

export const NAME = {
  type: 'string',
  maxLength: 1024,
  description: 'The registered command',
} as const;

const ARGS = {
  type: 'object',
  description:
    'The arguments, in the order they are passed: {"file": {"type": "string", "required": true, "format": "path"}, "verbose": {"type": "boolean", "flag": "-v"}}. Without "flag" a value is one positional argv element.',
  additionalProperties: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: [...ARGUMENT_TYPES] },
      description: { type: 'string' },
      required: { type: 'boolean' },
      flag: { type: 'string', description: 'Pass the value after this flag ("--out", "-n")' },
      format: { type: 'string', enum: ['path'], description: 'Refuse paths outside the sandbox' },
    },
    required: ['type'],
    additionalProperties: false,
  },
} as const;

export const COMMAND_FIELDS = {
  exec: {
    type: 'string',
    description:
      'The executable: absolute, relative to the sandbox scope ("./scripts/x.sh"), or a name on PATH',
  },
  args: ARGS,
  description: {
    type: 'string',
    description:
      'What the command does: agents read it as the tool\'s description (optional; without it, "Runs <exec>.")',
  },
  async: {
    type: 'boolean',
    description: 'Run in the background: the call answers with an operation id (default false)',
  },
  timeout: {
    type: 'string',
    description: 'Kill it after "30s", "5m", "1h" (default: the server\'s)',
  },
} as const;
