// The two output formats of ahma-list-tools: text for people, JSON for scripts.
import type { ServerListing } from './connect.js';
import { describeParameters, type Parameter } from './parameters.js';

/** `server: NAME VERSION`, then each tool with one indented line per parameter, then `N tools`. */
export function renderText(listing: ServerListing): string {
  const lines = [`server: ${listing.server.name} ${listing.server.version}`.trimEnd()];
  const instructions = firstLine(listing.instructions);
  if (instructions !== undefined) lines.push(`instructions: ${instructions}`);
  for (const tool of listing.tools) {
    lines.push('');
    const description = firstLine(tool.description);
    lines.push(description === undefined ? tool.name : `${tool.name} — ${description}`);
    // The header shows the first line only; the last paragraph (where Ahma puts a tool's hints
    // for the agent) is shown too when it is another one, so people see what agents are told.
    for (const line of lastParagraph(tool.description)) lines.push(`  | ${line}`);
    const parameters = describeParameters(tool.inputSchema);
    if (parameters.length === 0) lines.push('  (no parameters)');
    for (const parameter of parameters) lines.push(`  ${parameterLine(parameter)}`);
  }
  const count = listing.tools.length;
  lines.push('', `${count} tool${count === 1 ? '' : 's'}`);
  return `${lines.join('\n')}\n`;
}

/** `{ server, tools: [{ name, description, parameters, inputSchema, outputSchema? }] }`. */
export function renderJson(listing: ServerListing): string {
  const server: Record<string, unknown> = {
    name: listing.server.name,
    version: listing.server.version,
  };
  if (listing.instructions !== undefined) server['instructions'] = listing.instructions;
  const tools = listing.tools.map((tool) => ({
    name: tool.name,
    description: tool.description ?? null,
    parameters: describeParameters(tool.inputSchema),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
  }));
  return `${JSON.stringify({ server, tools }, null, 2)}\n`;
}

function parameterLine(parameter: Parameter): string {
  const required = parameter.required ? ' (required)' : '';
  const description = firstLine(parameter.description ?? undefined);
  return `${parameter.name}: ${parameter.type}${required}${description === undefined ? '' : ` — ${description}`}`;
}

/** The lines of the last paragraph of a description of several paragraphs; else none. */
function lastParagraph(text: string | undefined): string[] {
  const paragraphs = (text ?? '')
    .split(/\r?\n\s*\r?\n/)
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const last = paragraphs.at(-1);
  if (paragraphs.length < 2 || last === undefined) return [];
  return last.split(/\r?\n/).map((line) => line.trim());
}

/** The first non-blank line, trimmed; undefined when there is none. */
function firstLine(text: string | undefined): string | undefined {
  const line = text
    ?.split(/\r?\n/)
    .map((part) => part.trim())
    .find((part) => part !== '');
  return line === '' ? undefined : line;
}
