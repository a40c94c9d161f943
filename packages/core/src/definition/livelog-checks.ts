// Semantic checks of livelog tools (what the schema cannot say): the tool_type and the livelog
// block go together, a livelog tool is one asynchronous tool, the endpoint is an http(s) URL
// without credentials, and the API key is named, never written, in the file. Upstream ahma-labs'
// keys (livelog-extension-checks.ts) and unknown keys (warned about: upstream ignores them) too.
import type { Report } from './diagnostic.js';
import { SEQUENCE_COMMAND, splitCommand } from './flatten.js';
import { checkLivelogExtensions } from './livelog-extension-checks.js';
import { templateReferences, variableReference } from '../livelog/templates.js';
import {
  API_KEY_REFERENCE,
  LIVELOG_VARIABLE_PREFIX,
  type LivelogDefinition,
} from './livelog-schema.js';
import type { ToolDefinition } from './schema.js';

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
  checkProvider(livelog.llm_provider, report);
  checkLivelogExtensions(livelog, report);
  const key = livelog.llm_provider.api_key;
  if (key !== undefined && !API_KEY_REFERENCE.test(key)) {
    report(
      '/livelog/llm_provider/api_key',
      'api_key must name an environment variable as "${NAME}"; a tool file never holds the key itself',
      'set the key in the server\'s environment, e.g. OPENAI_API_KEY, and write "${OPENAI_API_KEY}"',
    );
  }
}

/**
 * base_url and model may read server variables named AHMA_LIVELOG_* (upstream ahma-labs'
 * `${AHMA_LIVELOG_MODEL:-lfm2.5:8b}`). base_url is checked with the defaults put in when every
 * reference has one; else when a monitor starts (livelog/start.ts).
 */
function checkProvider(provider: LivelogDefinition['llm_provider'], report: Report): void {
  const checked = { base_url: provider.base_url, model: provider.model };
  let url: string | undefined = provider.base_url;
  for (const [key, value] of Object.entries(checked)) {
    const pointer = `/livelog/llm_provider/${key}`;
    const { names, unclosed } = templateReferences(value);
    if (unclosed) {
      report(
        pointer,
        `${key} has a "\${" without a closing "}"`,
        'write "${NAME}" or "${NAME:-default}"',
      );
    }
    for (const text of names) {
      const reference = variableReference(text);
      if (reference === undefined) {
        report(
          pointer,
          `"\${${text}}" is not a variable reference`,
          'write "${NAME}" or "${NAME:-default}", NAME made of letters, digits and "_"',
        );
      } else if (!reference.name.startsWith(LIVELOG_VARIABLE_PREFIX)) {
        report(
          pointer,
          `${key} may read only variables named ${LIVELOG_VARIABLE_PREFIX}*, not ${reference.name}`,
          `rename the variable, e.g. ${LIVELOG_VARIABLE_PREFIX}${key === 'model' ? 'MODEL' : 'BASE_URL'}: a tool file must not read other server variables (secrets) into a request or a result`,
        );
      }
      if (key === 'base_url' && url !== undefined) {
        url =
          reference?.fallback === undefined
            ? undefined
            : url.replace(`\${${text}}`, reference.fallback);
      }
    }
    if (unclosed && key === 'base_url') url = undefined;
  }
  const urlProblem = url === undefined ? undefined : baseUrlProblem(url);
  if (urlProblem !== undefined) {
    report('/livelog/llm_provider/base_url', urlProblem, 'e.g. "http://localhost:11434/v1"');
  }
}

/** Why `value` cannot be an endpoint's base URL, if it cannot. */
export function baseUrlProblem(value: string): string | undefined {
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
