// Semantic checks of livelog tools (what the schema cannot say): the tool_type and the livelog
// block go together, a livelog tool is one asynchronous tool, the endpoint is an http(s) URL
// without credentials, and the API key is named, never written, in the file.
import { SEQUENCE_COMMAND, splitCommand } from './flatten.js';
import { API_KEY_REFERENCE } from './livelog-schema.js';
import type { ToolDefinition } from './schema.js';

type Report = (pointer: string, message: string, hint?: string) => void;

export function checkLivelog(definition: ToolDefinition, report: Report): void {
  const { livelog } = definition;
  if (definition.tool_type !== 'livelog') {
    if (livelog !== undefined) {
      report(
        '/livelog',
        '"livelog" is used only by a livelog tool',
        'add "tool_type": "livelog", or remove "livelog"',
      );
    }
    return;
  }
  if (livelog === undefined) {
    report(
      '/tool_type',
      '"tool_type": "livelog" needs a "livelog" block',
      'add "livelog": { "source_command", "detection_prompt", "llm_provider": { "base_url", "model" } }',
    );
  }
  if (definition.subcommand !== undefined) {
    report(
      '/subcommand',
      'a livelog tool is one tool and has no subcommands',
      'remove "subcommand", or make each monitor its own file',
    );
  }
  const command = splitCommand(definition.command);
  if (definition.sequence !== undefined || command[0] === SEQUENCE_COMMAND) {
    report(
      definition.sequence === undefined ? '/command' : '/sequence',
      'a livelog tool runs its source, not a sequence',
      'remove the sequence',
    );
  }
  if (definition.synchronous === true) {
    report(
      '/synchronous',
      'a livelog tool runs until it is cancelled, so a synchronous call would never return',
      'remove "synchronous"',
    );
  }
  if (livelog === undefined) return;

  if (/\s/.test(livelog.source_command)) {
    report(
      '/livelog/source_command',
      'source_command is one program, passed as one argv element',
      'put its arguments in "source_args"',
    );
  }
  livelog.source_args?.forEach((arg, index) => {
    if (arg.includes('\0')) {
      report(
        `/livelog/source_args/${String(index)}`,
        'contains a NUL byte, which no program can receive',
      );
    }
  });
  const urlProblem = baseUrlProblem(livelog.llm_provider.base_url);
  if (urlProblem !== undefined) {
    report('/livelog/llm_provider/base_url', urlProblem, 'e.g. "http://localhost:11434/v1"');
  }
  const key = livelog.llm_provider.api_key;
  if (key !== undefined && !API_KEY_REFERENCE.test(key)) {
    report(
      '/livelog/llm_provider/api_key',
      'api_key must name an environment variable as "${NAME}"; a tool file never holds the key itself',
      'set the key in the server\'s environment, e.g. OPENAI_API_KEY, and write "${OPENAI_API_KEY}"',
    );
  }
}

/** Why `value` cannot be an endpoint's base URL, if it cannot. */
function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `base_url "${value}" is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `base_url must be an http:// or https:// URL, not "${url.protocol}"`;
  }
  if (url.username !== '' || url.password !== '') {
    return 'base_url must not carry credentials (they would be logged and shown to agents)';
  }
  if (url.search !== '' || url.hash !== '') {
    return 'base_url takes no query or fragment: "/chat/completions" is appended to it';
  }
  return undefined;
}
