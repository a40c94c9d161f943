// The `${…}` references of livelog settings. Two kinds, as upstream ahma-labs defines them:
// call parameters in source_args and env values (`${serial}`: the call's value, or the element is
// left out), and server variables in llm_provider's base_url and model (`${AHMA_LIVELOG_MODEL}`,
// `${AHMA_LIVELOG_MODEL:-llama3.2}`). Substituted text is never interpreted by a shell, and a
// substituted value is not scanned again (a value holding "${x}" stays as it is).
import { AhmaError } from '../errors.js';

/** What a template references: the text between each "${" and the next "}". */
export interface TemplateReferences {
  readonly names: readonly string[];
  /** A "${" without a closing "}" (upstream leaves such an element out). */
  readonly unclosed: boolean;
}

export function templateReferences(template: string): TemplateReferences {
  const names: string[] = [];
  let rest = template;
  for (;;) {
    const start = rest.indexOf('${');
    if (start === -1) return { names, unclosed: false };
    const end = rest.indexOf('}', start + 2);
    if (end === -1) return { names, unclosed: true };
    names.push(rest.slice(start + 2, end));
    rest = rest.slice(end + 1);
  }
}

/**
 * Upstream's substitution of call parameters: every `${name}` replaced by its value; undefined (the
 * element or entry is left out) when a referenced parameter has no value or a "${" is unclosed.
 */
export function substituteParameters(
  template: string,
  values: ReadonlyMap<string, string>,
): string | undefined {
  let out = '';
  let rest = template;
  for (;;) {
    const start = rest.indexOf('${');
    if (start === -1) return out + rest;
    const end = rest.indexOf('}', start + 2);
    if (end === -1) return undefined;
    const value = values.get(rest.slice(start + 2, end));
    if (value === undefined) return undefined;
    out += rest.slice(0, start) + value;
    rest = rest.slice(end + 1);
  }
}

/** `NAME` or `NAME:-default`: a server variable read by base_url or model. */
const VARIABLE_REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

export interface VariableReference {
  readonly name: string;
  /** Used when the variable is unset or empty (`${NAME:-default}`, as in a shell). */
  readonly fallback: string | undefined;
}

/** A reference's variable, or undefined when it is not `NAME` or `NAME:-default`. */
export function variableReference(reference: string): VariableReference | undefined {
  const match = VARIABLE_REFERENCE.exec(reference);
  if (match?.[1] === undefined) return undefined;
  return { name: match[1], fallback: match[2] };
}

/**
 * base_url or model with its server variables read from `env`. The file's checks guarantee the
 * references' form; a variable that is unset (or empty) without a default is an error.
 */
export function interpolateVariables(
  key: string,
  template: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  let out = '';
  let rest = template;
  for (;;) {
    const start = rest.indexOf('${');
    const end = start === -1 ? -1 : rest.indexOf('}', start + 2);
    if (end === -1) return out + rest;
    const reference = variableReference(rest.slice(start + 2, end));
    if (reference === undefined) return out + rest;
    const value = env[reference.name];
    const resolved = value === undefined || value === '' ? reference.fallback : value;
    if (resolved === undefined) {
      throw new AhmaError(
        'CONFIG_INVALID',
        `llm_provider.${key} reads \${${reference.name}}, which is not set in the server's environment (and gives no default, as "\${${reference.name}:-…}" would)`,
      );
    }
    out += rest.slice(0, start) + resolved;
    rest = rest.slice(end + 1);
  }
}
