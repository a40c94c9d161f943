// Strict JSON parsing that reports where a syntax error is (line and column) and refuses duplicate
// keys, which JSON.parse would silently resolve to the last one (a typo must not pass unnoticed).
import { getLocation, printParseErrorCode, visit, type ParseErrorCode } from 'jsonc-parser';
import { diagnostic, jsonPointer, type Diagnostic } from './diagnostic.js';

export type ParseResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

// Keyed by jsonc-parser's code names (its codes are a const enum, unusable under verbatimModuleSyntax).
const syntaxHints: Readonly<Record<string, string>> = {
  CommaExpected: 'separate members and elements with ","',
  PropertyNameExpected: 'keys are double-quoted strings; no trailing comma',
  ValueExpected: 'no trailing comma; strings use double quotes',
  InvalidSymbol: 'comments and single quotes are not JSON',
  InvalidCommentToken: 'comments are not JSON',
};

export function parseJsonDocument(file: string, input: string): ParseResult {
  // Some Windows editors start UTF-8 files with a byte-order mark; it is not content.
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  // Most files are valid: JSON.parse, with as many keys parsed as the text spells (no duplicate),
  // is a tenth of the cost of the walk below, which is kept for saying where a problem is.
  const parsed = parseWithoutDuplicates(text);
  if (parsed !== undefined) return { ok: true, value: parsed.value };
  const diagnostics: Diagnostic[] = [];
  const lineStarts = lineStartOffsets(text);
  const keysSeen: Set<string>[] = [];
  let reportedSyntax = false;

  visit(
    text,
    {
      onObjectBegin: () => void keysSeen.push(new Set()),
      onObjectEnd: () => void keysSeen.pop(),
      onObjectProperty: (key, offset) => {
        const seen = keysSeen.at(-1);
        if (seen === undefined) return;
        if (seen.has(key)) {
          const path = getLocation(text, offset + 1).path;
          diagnostics.push(
            diagnostic(
              file,
              jsonPointer(path),
              `duplicate key "${key}" at ${position(lineStarts, offset)}`,
              'keep one; JSON parsers silently use the last',
            ),
          );
        }
        seen.add(key);
      },
      onError: (code, offset) => {
        // The first syntax error is the real one; later ones are its echoes.
        if (reportedSyntax) return;
        reportedSyntax = true;
        diagnostics.push(
          diagnostic(
            file,
            '',
            `invalid JSON at ${position(lineStarts, offset)}: ${describeCode(code)}`,
            syntaxHints[printParseErrorCode(code)],
          ),
        );
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );

  if (diagnostics.length > 0) return { ok: false, diagnostics };
  return { ok: true, value: JSON.parse(text) as unknown };
}

/** The value of `text` when it is JSON without a key spelled twice in one object. */
function parseWithoutDuplicates(text: string): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Matched in order, each string token is consumed whole (between them, JSON has no `"`), and
  // those followed by `:` are the keys. A duplicate leaves the parsed value a key short.
  let spelled = 0;
  for (const match of text.matchAll(/"(?:[^"\\]|\\.)*"(\s*:)?/g))
    if (match[1] !== undefined) spelled += 1;
  return spelled === keyCount(value) ? { value } : undefined;
}

function keyCount(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + keyCount(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  const entries = Object.values(value);
  return entries.length + entries.reduce((sum: number, item) => sum + keyCount(item), 0);
}

function describeCode(code: ParseErrorCode): string {
  return printParseErrorCode(code)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

function lineStartOffsets(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

function position(lineStarts: readonly number[], offset: number): string {
  let line = 0;
  while (line + 1 < lineStarts.length && (lineStarts[line + 1] ?? Infinity) <= offset) line++;
  return `line ${line + 1}, column ${offset - (lineStarts[line] ?? 0) + 1}`;
}
