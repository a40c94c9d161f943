// What one call of a livelog tool runs, resolved before anything starts (upstream ahma-labs'
// resolve_runtime): the call's parameters put into source_args and env, the clear run unless the
// call says `clear: false`, and the endpoint and model with their server variables read. A problem
// (a NUL byte, an unset variable, a bad URL) refuses the call; nothing has run yet.
import { baseUrlProblem } from '../definition/livelog-checks.js';
import { CLEAR_ARGUMENT, type LivelogSettings } from '../definition/livelog-settings.js';
import { AhmaError } from '../errors.js';
import { interpolateVariables, substituteParameters } from './templates.js';

export interface LivelogStart {
  /** The source's argv. */
  readonly argv: readonly string[];
  /** Variables set for the source and the clear run (values, never read by a shell). */
  readonly env: Readonly<Record<string, string>>;
  /** The clear run's argv; undefined when the tool has none or the call skips it. */
  readonly clearArgv: readonly string[] | undefined;
  /** Without a trailing "/". */
  readonly baseUrl: string;
  readonly model: string;
}

export function resolveLivelogStart(
  settings: LivelogSettings,
  args: Readonly<Record<string, unknown>>,
  serverEnv: Readonly<Record<string, string | undefined>>,
): LivelogStart {
  const values = new Map<string, string>();
  for (const parameter of settings.parameters) {
    const value = args[parameter.name];
    // As upstream: a value that is not a non-empty string is not given (the inputSchema has
    // already refused any other type).
    if (typeof value === 'string' && value !== '') {
      if (value.includes('\0')) {
        throw new AhmaError(
          'ARGUMENTS_INVALID',
          `argument "${parameter.name}" holds a NUL byte, which no program can receive`,
        );
      }
      values.set(parameter.name, value);
    } else if (parameter.required) {
      throw new AhmaError(
        'ARGUMENTS_INVALID',
        `argument "${parameter.name}" is required and may not be empty`,
      );
    }
  }
  const sourceArgs = settings.sourceArgs.flatMap((arg) => {
    const substituted = substituteParameters(arg, values);
    return substituted === undefined ? [] : [substituted];
  });
  const env: Record<string, string> = {};
  for (const [name, template] of Object.entries(settings.env)) {
    const value = substituteParameters(template, values);
    if (value !== undefined) env[name] = value;
  }
  const baseUrl = interpolateVariables('base_url', settings.baseUrl, serverEnv).replace(/\/+$/, '');
  const urlProblem = baseUrlProblem(baseUrl);
  if (urlProblem !== undefined) {
    throw new AhmaError('CONFIG_INVALID', `llm_provider.base_url, as read: ${urlProblem}`);
  }
  const model = interpolateVariables('model', settings.model, serverEnv);
  if (model === '') {
    throw new AhmaError('CONFIG_INVALID', 'llm_provider.model, as read, is empty');
  }
  const clear = settings.clearArgs !== undefined && args[CLEAR_ARGUMENT] !== false;
  return {
    argv: [settings.sourceCommand, ...sourceArgs],
    env,
    clearArgv:
      clear && settings.clearArgs !== undefined
        ? [settings.sourceCommand, ...settings.clearArgs]
        : undefined,
    baseUrl,
    model,
  };
}
