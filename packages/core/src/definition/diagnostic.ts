// One problem found in a definition file, in the shape every consumer prints or returns:
// `file#/json/pointer: message (hint)`.

export interface Diagnostic {
  /** Path of the file the problem is in, as the caller named it. */
  readonly file: string;
  /** RFC 6901 JSON pointer to the offending value; "" for the whole document. */
  readonly pointer: string;
  readonly message: string;
  /** How to fix it, when there is something more useful to say than the message. */
  readonly hint?: string;
}

/** Formats a diagnostic as one line: `file#/json/pointer: message (hint)`. */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const hint = diagnostic.hint === undefined ? '' : ` (${diagnostic.hint})`;
  return `${diagnostic.file}#${diagnostic.pointer}: ${diagnostic.message}${hint}`;
}

/** Builds a JSON pointer from path segments, escaping "~" and "/" as RFC 6901 requires. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

export function diagnostic(
  file: string,
  pointer: string,
  message: string,
  hint?: string,
): Diagnostic {
  return hint === undefined ? { file, pointer, message } : { file, pointer, message, hint };
}
