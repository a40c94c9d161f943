// Checks of upstream ahma-labs' livelog keys (parameters, env, clear_command, prefilter_regex,
// structured_output) and of keys Ahma does not know. Upstream ignores an unknown livelog key, so
// Ahma loads the file and warns, naming the key it was probably meant to be. What would run
// differently than written is an error: a `${name}` no parameter declares (upstream silently
// leaves that element out of every call), a pattern that is no regular expression, an environment
// variable the server must keep as it is.
import { NON_INTERACTIVE_ENV } from '../process/environment.js';
import { compilePrefilter } from '../livelog/prefilter-pattern.js';
import { templateReferences } from '../livelog/templates.js';
import { isMetaParameter } from './input-schema.js';
import type { Report } from './diagnostic.js';
import { LIVELOG_KEYS, type LivelogDefinition } from './livelog-schema.js';
import { CLEAR_ARGUMENT } from './livelog-settings.js';
import { closestMatch } from './suggest.js';

/** A parameter's name: an MCP argument name that reads well as `${name}`. */
const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/** An environment variable's name (the pool's shells take no other). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Variables a tool file may not set: the non-interactive settings (they always win, so a value
 * would be silently replaced), the ones the server removes from every command (a shell would run
 * the file BASH_ENV/ENV name; askpass helpers pop up), and the pool's own.
 */
const SERVER_ENV = new Set([
  ...Object.keys(NON_INTERACTIVE_ENV),
  'BASH_ENV',
  'ENV',
  'SSH_ASKPASS',
  'GIT_ASKPASS',
]);

export function checkLivelogExtensions(livelog: LivelogDefinition, report: Report): void {
  checkUnknownKeys(livelog, report);
  const declared = checkParameters(livelog, report);
  livelog.source_args?.forEach((arg, index) => {
    checkReferences(arg, `/livelog/source_args/${String(index)}`, declared, report);
  });
  checkEnv(livelog.env ?? {}, declared, report);
  checkClearCommand(livelog.clear_command, report);
  if (livelog.prefilter_regex !== undefined) {
    const compiled = compilePrefilter(livelog.prefilter_regex);
    if (!compiled.ok) {
      report(
        '/livelog/prefilter_regex',
        `prefilter_regex ${compiled.problem}`,
        'it uses Rust regex syntax, as upstream: e.g. "(?i)(error|panic|fatal)"',
      );
    }
  }
}

function checkUnknownKeys(livelog: LivelogDefinition, report: Report): void {
  for (const key of Object.keys(livelog)) {
    if (LIVELOG_KEYS.includes(key)) continue;
    const near = closestMatch(key, LIVELOG_KEYS);
    report(
      `/livelog/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`,
      `"${key}" is not a livelog key Ahma knows; it is ignored`,
      near === undefined ? 'remove it' : `did you mean "${near}"?`,
      'warning',
    );
  }
  if (livelog.structured_output === true) {
    report(
      '/livelog/structured_output',
      'structured_output is ignored: Ahma asks the model for a plain-text summary and alerts carry it as text',
      'remove it unless the file is shared with the Rust ahma',
      'warning',
    );
  }
}

/** The declared parameter names; reports bad, duplicate and reserved ones. */
function checkParameters(livelog: LivelogDefinition, report: Report): Set<string> {
  const names = new Set<string>();
  livelog.parameters?.forEach((parameter, index) => {
    const pointer = `/livelog/parameters/${String(index)}/name`;
    const { name } = parameter;
    if (!PARAMETER_NAME.test(name)) {
      report(
        pointer,
        `parameter name "${name}" is not a name an argument can have`,
        'use letters, digits, "_" and "-", starting with a letter or "_", at most 64 characters',
      );
    } else if (names.has(name)) {
      report(pointer, `parameter "${name}" is declared twice`, 'remove one');
    } else if (isMetaParameter(name)) {
      report(
        pointer,
        `parameter "${name}" has the name of a meta-parameter every tool takes`,
        'rename it',
      );
    } else if (name === CLEAR_ARGUMENT && livelog.clear_command !== undefined) {
      report(
        pointer,
        `parameter "${name}" has the name of the argument that skips clear_command`,
        'rename it',
      );
    }
    names.add(name);
  });
  return names;
}

/** Every `${…}` of a source_args element or env value names a declared parameter. */
function checkReferences(
  template: string,
  pointer: string,
  declared: ReadonlySet<string>,
  report: Report,
): void {
  const { names, unclosed } = templateReferences(template);
  for (const name of names) {
    if (declared.has(name)) continue;
    const near = closestMatch(name, declared);
    report(
      pointer,
      `references "\${${name}}", which no parameter declares: upstream leaves this element out of every call`,
      near !== undefined
        ? `did you mean "\${${near}}"?`
        : `declare "${name}" in "parameters"; for a shell variable in a script write $${name}`,
    );
  }
  if (unclosed) {
    report(
      pointer,
      'has a "${" without a closing "}": upstream leaves this element out of every call',
      'close it, or write "$" without "{"',
    );
  }
}

function checkEnv(
  env: Readonly<Record<string, string>>,
  declared: ReadonlySet<string>,
  report: Report,
): void {
  for (const [name, value] of Object.entries(env)) {
    const pointer = `/livelog/env/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!ENV_NAME.test(name) || name.startsWith('__ahma_')) {
      report(
        pointer,
        `"${name}" is not an environment variable name a command can be given`,
        'use letters, digits and "_", not starting with a digit (nor with "__ahma_")',
      );
    } else if (SERVER_ENV.has(name)) {
      report(
        pointer,
        `${name} is set (or removed) by the server for every command; a tool file cannot change it`,
        'remove it',
      );
    }
    if (value.includes('\0')) {
      report(pointer, 'contains a NUL byte, which no environment can hold');
    }
    checkReferences(value, pointer, declared, report);
  }
}

function checkClearCommand(clear: readonly string[] | undefined, report: Report): void {
  if (clear === undefined) return;
  if (clear.length === 0) {
    report(
      '/livelog/clear_command',
      'clear_command is empty: it would run source_command itself, with no arguments',
      'give the arguments of source_command that clear the source, e.g. ["logcat", "-c"]',
    );
  }
  clear.forEach((arg, index) => {
    if (arg.includes('\0')) {
      report(
        `/livelog/clear_command/${String(index)}`,
        'contains a NUL byte, which no program can receive',
      );
    }
  });
}
