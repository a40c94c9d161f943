// Renders the generated parts of docs/catalog.md from the loaded catalog: an overview of every
// definition's tools and, per definition, each tool's command line, mode and parameters. The doc
// test compares these with the committed file, so the doc cannot drift from tools/ (SPEC §2, the
// house rule "docs generated from code where they can drift").
import { type CheckedDefinition, type LoadedTool } from '../../src/index.js';
import { buildArgv, flagOf } from '../../src/argv/build.js';
import { stepTarget } from '../../src/definition/definition-set.js';
import { type ArgumentDefinition } from '../../src/definition/schema.js';

/** Block names: "overview" and one per definition name. */
export type Blocks = ReadonlyMap<string, string>;

const START = (name: string) => `<!-- generated:${name} -->`;
const END = (name: string) => `<!-- /generated:${name} -->`;

/** Every generated block for the catalog. */
export function renderBlocks(
  definitions: readonly CheckedDefinition[],
  tools: readonly LoadedTool[],
): Blocks {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const blocks = new Map<string, string>([['overview', renderOverview(definitions, tools)]]);
  for (const { definition } of definitions) {
    const own = tools.filter((tool) => tool.leaf.definitionName === definition.name);
    blocks.set(definition.name, own.map((tool) => renderTool(tool, byName)).join('\n'));
  }
  return blocks;
}

function renderOverview(
  definitions: readonly CheckedDefinition[],
  tools: readonly LoadedTool[],
): string {
  const rows = definitions.map(({ definition }) => {
    const names = tools
      .filter((tool) => tool.leaf.definitionName === definition.name)
      .map((tool) => `\`${tool.name}\``);
    return `| \`${definition.name}\` | \`${definition.command}\` | ${String(names.length)} | ${names.join(', ')} |`;
  });
  return [
    '| `--tools` name | command | tools | tool names |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

function renderTool(tool: LoadedTool, byName: ReadonlyMap<string, LoadedTool>): string {
  const { leaf } = tool;
  const mode = leaf.synchronous ? 'sync' : 'async';
  const lines = [`- **\`${tool.name}\`** (${mode}): ${text(leaf.baseDescription)}`];
  if (leaf.sequence !== undefined) {
    const steps = leaf.sequence.map((step) => {
      const name = stepTarget(
        step,
        [...byName.values()].map((tool) => tool.leaf),
      );
      const target = byName.get(name);
      const argv = target === undefined ? [name] : buildArgv(target.leaf, step.args ?? {});
      return `\`${argv.join(' ')}\``;
    });
    lines.push(`  Runs, in order: ${steps.join(' → ')}.`);
    return lines.join('\n');
  }
  lines.push(`  Runs \`${[...leaf.command, ...leaf.subcommandPath].join(' ')}\`.`);
  const options = leaf.options.map((option) => parameter(option, true));
  const positionals = leaf.positionals.map((positional) => parameter(positional, false));
  if (options.length > 0) lines.push(`  Options: ${options.join(', ')}.`);
  if (positionals.length > 0) {
    const first = leaf.positionalsFirst ? ' (before the options)' : '';
    lines.push(`  Positionals${first}: ${positionals.join(', ')}.`);
  }
  return lines.join('\n');
}

function parameter(argument: ArgumentDefinition, isOption: boolean): string {
  const notes: string[] = [];
  if (isOption) {
    const flag = argument.file_arg === true ? argument.file_flag : flagOf(argument);
    if (flag !== undefined && flag !== `--${argument.name}` && flag !== argument.name) {
      notes.push(`\`${flag}\``);
    }
  }
  if (argument.file_arg === true) notes.push('temp file');
  if (argument.after_double_dash === true) notes.push('after `--`');
  // The exceptions to SPEC §2's "a value is data" rule, so a reader sees them at a glance.
  if (!isOption && argument.accepts_options === true) notes.push('may be options');
  if (isOption && argument.accepts_options === false) notes.push('no leading `-`');
  if (argument.format === 'path' || argument.items?.format === 'path') notes.push('path');
  if (argument.required === true) notes.push('required');
  if (argument.default !== undefined) notes.push(`default \`${JSON.stringify(argument.default)}\``);
  const name = argument.type === 'array' && !isOption ? `${argument.name}…` : argument.name;
  return notes.length === 0 ? `\`${name}\`` : `\`${name}\` (${notes.join(', ')})`;
}

/** Description text safe in Markdown: no raw HTML ("Name <email>"). */
function text(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The generated blocks present in a document, by name. */
export function extractBlocks(document: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of document.matchAll(
    /<!-- generated:([\w-]+) -->\n([\s\S]*?)\n<!-- \/generated:\1 -->/g,
  )) {
    const [, name, body] = match;
    if (name !== undefined && body !== undefined) found.set(name, body);
  }
  return found;
}

/** The document with each existing block's body replaced by the freshly rendered one. */
export function replaceBlocks(document: string, blocks: Blocks): string {
  let result = document;
  for (const [name, body] of blocks) {
    const start = result.indexOf(START(name));
    const end = result.indexOf(END(name));
    if (start < 0 || end < start) {
      throw new Error(`docs/catalog.md has no ${START(name)} … ${END(name)} block; add one`);
    }
    result = `${result.slice(0, start + START(name).length)}\n${body}\n${result.slice(end)}`;
  }
  return result;
}
