// One problem found in a definition file, in the shape every consumer prints or returns:
// `file#/json/pointer: message (hint)`, prefixed with "warning: " when it does not reject the file.

/**
 * `error`: the file is rejected. `warning`: harmless redundancy or a key Ahma accepts but ignores
 * (R5.2): printed and logged, and the file loads.
 */
export type Severity = 'error' | 'warning';

/** How a check reports a problem at a JSON pointer (an error unless `severity` says otherwise). */
export type Report = (pointer: string, message: string, hint?: string, severity?: Severity) => void;

export interface Diagnostic {
  /** Path of the file the problem is in, as the caller named it. */
  readonly file: string;
  /** RFC 6901 JSON pointer to the offending value; "" for the whole document. */
  readonly pointer: string;
  readonly message: string;
  /** How to fix it, when there is something more useful to say than the message. */
  readonly hint?: string;
  readonly severity: Severity;
}

/** Formats a diagnostic as one line: `file#/json/pointer: message (hint)`. */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const hint = diagnostic.hint === undefined ? '' : ` (${diagnostic.hint})`;
  const marker = diagnostic.severity === 'warning' ? 'warning: ' : '';
  return `${diagnostic.file}#${diagnostic.pointer}: ${marker}${diagnostic.message}${hint}`;
}

/** Builds a JSON pointer from path segments, escaping "~" and "/" as RFC 6901 requires. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** An error: the file is rejected. */
export function diagnostic(
  file: string,
  pointer: string,
  message: string,
  hint?: string,
): Diagnostic {
  return hint === undefined
    ? { file, pointer, message, severity: 'error' }
    : { file, pointer, message, hint, severity: 'error' };
}

/** A warning: printed and logged, but the file loads. */
export function warning(file: string, pointer: string, message: string, hint?: string): Diagnostic {
  return { ...diagnostic(file, pointer, message, hint), severity: 'warning' };
}

export function isError(diagnostic: Diagnostic): boolean {
  return diagnostic.severity === 'error';
}
