// activate_tools (SPEC §3 bundles on demand): progressive disclosure of the bundled catalog. The
// agent starts with few tools, lists the bundles whose program is installed here, and reveals the
// ones it needs; the client is told with tools/list_changed. Hidden by --no-tool-discovery.
import { BUILTIN_TOOLS, type ArgumentValidator } from '@ahma/core';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import {
  installLine,
  type Bundles,
  type BundleStatus,
  type RevealOutcome,
  type UnknownBundle,
} from './bundles.js';
import { outputSchemaWithError, toolError } from '../calls/results.js';
import { NEVER_A_TASK, invalidArguments, refused, type ToolEntry } from './tool.js';

const BUNDLE_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    summary: { type: 'string' },
    tools: { type: 'integer', description: 'How many tools the bundle adds.' },
    installed: { type: 'boolean' },
    revealed: { type: 'boolean' },
    overridden: {
      type: 'boolean',
      description: "A project tool file with the bundle's name replaces it.",
    },
    reason: { type: 'string', description: 'Why it is not installed.' },
    install_instructions: { type: 'string' },
  },
  required: ['name', 'summary', 'tools', 'installed', 'revealed', 'overridden'],
} as const;

const names = { type: 'array', items: { type: 'string' } } as const;

/** list → bundles (installed) and not_installed; reveal → what it revealed and the tools now listed. */
const OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['list', 'reveal'] },
    bundles: { type: 'array', items: BUNDLE_SCHEMA },
    not_installed: { type: 'array', items: BUNDLE_SCHEMA },
    revealed: names,
    already_revealed: names,
    tools: names,
    overridden: {
      type: 'array',
      description: 'Named bundles a project tool file replaces, and the file served for each.',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, file: { type: 'string' } },
        required: ['name', 'file'],
      },
    },
    sandbox_profiles_not_enabled: {
      type: 'array',
      description:
        'Named bundles whose sandbox profiles (extra paths such as their caches) are not enabled: only the person running Ahma enables them, with the flag given.',
      items: {
        type: 'object',
        properties: { bundle: { type: 'string' }, profiles: names, flag: { type: 'string' } },
        required: ['bundle', 'profiles', 'flag'],
      },
    },
  },
  required: ['action'],
} as const;

const TOOL: Tool = {
  name: BUILTIN_TOOLS.activateTools,
  description:
    'More tools come in bundles of ready-made tools for common programs (git, cargo, npm, …). ' +
    '`{"action": "list"}` shows the bundles whose program is installed here: name, summary, tool ' +
    'count and whether it is revealed. `{"action": "reveal", "bundle": "git"}` (or a list of ' +
    "names) adds a bundle's tools to this server; the tool list then changes (tools/list_changed).",
  inputSchema: {
    type: 'object',
    properties: {
      action: {
        type: 'string',
        enum: ['list', 'reveal'],
        default: 'list',
        description: '"list" the bundles (default) or "reveal" the named ones.',
      },
      bundle: {
        anyOf: [
          { type: 'string', minLength: 1 },
          { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
        ],
        description: 'Bundle name(s): required to reveal; with list, shows only these.',
      },
    },
    additionalProperties: false,
  },
  outputSchema: outputSchemaWithError(OUTPUT_SCHEMA),
  execution: NEVER_A_TASK,
};

/** The activate_tools built-in over the server's bundles. */
export function activateToolsTool(
  bundles: Bundles,
  context: { readonly validator: ArgumentValidator; readonly logger: Logger },
): ToolEntry {
  return {
    tool: TOOL,
    // One-shot CLI: `-- reveal git cargo`.
    fromWords: ([action, ...rest]) => ({
      ...(action === undefined ? {} : { action }),
      ...(rest.length === 0 ? {} : { bundle: rest }),
    }),
    async call(args) {
      const invalid = invalidArguments(context, TOOL, args);
      if (invalid !== undefined) return invalid;
      const bundle = args['bundle'];
      const named =
        bundle === undefined
          ? undefined
          : Array.isArray(bundle)
            ? bundle.map(String)
            : [String(bundle)];
      if (args['action'] === 'reveal') {
        if (named === undefined) {
          return refused(
            'reveal needs "bundle": the name of a bundle (or a list); {"action": "list"} shows them.',
          );
        }
        return { kind: 'answer', result: revealResult(await bundles.reveal(named)) };
      }
      if (named !== undefined) {
        const unknown = await bundles.unknown(named);
        if (unknown.length > 0) return { kind: 'answer', result: unknownError(unknown) };
      }
      const all = await bundles.list();
      const result = listResult(
        named === undefined ? all : all.filter((b) => named.includes(b.name)),
        named !== undefined,
      );
      return { kind: 'answer', result };
    },
  };
}

/** The list answer; `filtered` when the call named bundles (the text then speaks of those only). */
function listResult(all: readonly BundleStatus[], filtered: boolean): CallToolResult {
  const installed = all.filter((b) => b.installed);
  const missing = all.filter((b) => !b.installed);
  const lines = [
    installed.length === 0
      ? filtered
        ? 'None of the named bundles is installed here.'
        : 'No bundle is installed here.'
      : 'Bundles installed here (reveal with {"action": "reveal", "bundle": NAME}):',
    ...installed.map((b) => {
      const notes = [
        `${String(b.tools)} tools`,
        ...(b.revealed ? ['revealed'] : []),
        ...(b.overridden ? ['replaced by a project tool file'] : []),
      ];
      return `- ${b.name} (${notes.join(', ')}): ${b.summary}`;
    }),
  ];
  if (missing.length > 0) {
    lines.push('', 'Not installed here (their program is missing):');
    // The model reads the text, not structuredContent: each missing bundle says how to install it.
    lines.push(
      ...missing.map(
        (b) =>
          `- ${b.name}: ${b.reason ?? 'unavailable'}` +
          (b.install_instructions === undefined
            ? ''
            : `\n  To install: ${installLine(b.install_instructions)}`),
      ),
    );
  }
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: { action: 'list', bundles: installed, not_installed: missing },
  };
}

function revealResult(outcome: RevealOutcome): CallToolResult {
  switch (outcome.kind) {
    case 'unknown':
      return unknownError(outcome.unknown);
    case 'not_installed':
      return toolError(
        outcome.missing
          .map(
            (b) =>
              `Bundle "${b.name}" cannot be revealed: its program is not installed here (${b.reason ?? 'unavailable'}).` +
              (b.install_instructions === undefined
                ? ''
                : `\nTo install: ${b.install_instructions}`),
          )
          .join('\n\n'),
      );
    case 'revealed': {
      const parts: string[] = [];
      if (outcome.revealed.length > 0) parts.push(`Revealed ${outcome.revealed.join(', ')}.`);
      if (outcome.alreadyRevealed.length > 0) {
        parts.push(`Already revealed: ${outcome.alreadyRevealed.join(', ')}.`);
      }
      for (const { name, file } of outcome.overridden) {
        parts.push(
          `${name} is served from the project tool file ${file}, which replaces the bundle.`,
        );
      }
      parts.push(
        outcome.tools.length === 0
          ? 'No tool of these bundles is available.'
          : `Tools available: ${outcome.tools.join(', ')}.`,
      );
      // R7.14: revealing never widens the sandbox; the person can, at the next start.
      const notEnabled = outcome.profilesNotEnabled.map((each) => ({
        bundle: each.bundle,
        profiles: [...each.profiles],
        flag: `--profile ${each.profiles.join(',')}`,
      }));
      for (const { bundle, profiles, flag } of notEnabled) {
        parts.push(
          `${bundle}'s tools run without the sandbox profile(s) it names (${profiles.join(', ')}): ` +
            `paths such as its caches stay read-only or unreadable. Only the person running Ahma ` +
            `can enable them, by restarting it with ${flag}.`,
        );
      }
      return {
        content: [{ type: 'text', text: parts.join(' ') }],
        structuredContent: {
          action: 'reveal',
          revealed: [...outcome.revealed],
          already_revealed: [...outcome.alreadyRevealed],
          tools: [...outcome.tools],
          overridden: outcome.overridden.map((o) => ({ ...o })),
          ...(notEnabled.length === 0 ? {} : { sandbox_profiles_not_enabled: notEnabled }),
        },
      };
    }
  }
}

function unknownError(unknown: readonly UnknownBundle[]): CallToolResult {
  const lines = unknown.map(
    (u) =>
      `No bundle named "${u.name}".` +
      (u.suggestion === undefined ? '' : ` Did you mean "${u.suggestion}"?`),
  );
  lines.push(`Bundles: ${unknown[0]?.known.join(', ') || 'none'}.`);
  return toolError(lines.join('\n'));
}
