// What every MCP client of Ahma shares besides OAuth: a result validator that accepts everything,
// and error messages in one line.
import type {
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';

/**
 * For a client that lists or forwards tools and does not judge their results: the SDK's default
 * compiles every output schema with ajv, so one schema ajv cannot compile (an unresolvable $ref)
 * fails a whole listing, and a hostile one (a backtracking pattern) holds the thread for hours.
 */
export const ACCEPT_ANY_OUTPUT: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** The error's own message, with the messages of its causes when they add something. */
export function messageOf(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message !== '' && !parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ') || 'unknown error';
}

/** `text` on one line, at most `max` characters. */
export function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
