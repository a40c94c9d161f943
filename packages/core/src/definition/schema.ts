// The single source of truth for the MTDF (tool definition) format. The TypeScript types, the
// published JSON Schema (docs/mtdf-schema.json) and the validator all derive from this file.
import * as z from 'zod';
import { PROFILE_NAMES } from '../sandbox/profiles.js';
import { livelogSchema, toolTypeSchema } from './livelog-schema.js';

/** Longest value accepted for any timeout, in seconds (one day). */
export const MAX_TIMEOUT_SECONDS = 86_400;

const identifier = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/)
  .describe('Letters, digits, "-" and "_"; starts with a letter or digit.');

const timeoutSeconds = z
  .number()
  .int()
  .min(1)
  .max(MAX_TIMEOUT_SECONDS)
  .describe('Kill the command after this many seconds (1..86400).');

const synchronous = z
  .boolean()
  .describe(
    "true: the call blocks and returns the result. false or unset: the call returns an operation id at once and the result is pushed when the command finishes. A subcommand inherits its parent's value.",
  );

// Compatibility with the Rust ahma's tool files (SPEC §2): an alias it accepts for "synchronous".
// normalize.ts folds it into "synchronous" before anything else reads the definition.
const forceSynchronous = z
  .boolean()
  .describe('Same as "synchronous" (the Rust ahma\'s older name). Give one of the two.');

const enabled = z.boolean().describe('false hides this tool or subcommand. Default true.');

/** The workspace lanes a call can run in (upstream's `concurrency` values). */
export const WORKSPACE_LANES = ['exclusive', 'read_only', 'service'] as const;

const concurrency = z
  .enum(WORKSPACE_LANES)
  .describe(
    'The workspace lane a call runs in: "exclusive" (may write the workspace; such calls in one workspace run one at a time, in arrival order), "read_only" (runs at once, with no write access to the workspace), "service" (long-lived, such as a dev server or a log follower; runs beside both). A subcommand inherits its parent\'s value; unset, the server chooses.',
  );

// The Rust ahma reads it only in its own agent's approval prompt; Ahma records it on each tool.
const mutates = z
  .boolean()
  .describe(
    'Whether the tool changes files or other state (the Rust ahma\'s approval hint). Recorded with each tool; the workspace lane is chosen by "concurrency", not by this. A subcommand inherits its parent\'s value.',
  );

// The Rust ahma's format is free-form and only "path" means anything there too (normalize.ts drops
// any other value, with a warning).
const format = z
  .string()
  .min(1)
  .describe(
    '"path": the value is resolved against the working directory and refused outside the sandbox scope (on an array: each element). Any other value is accepted and ignored, with a warning.',
  );

const guidanceKey = z
  .string()
  .min(1)
  .describe(
    'Key of a guidance block in tool_guidance.json (or a built-in one) prepended to the description.',
  );

const description = z
  .string()
  .min(1)
  .describe('What it does, written for the AI agent that will call it.');

const valueType = z.enum(['string', 'boolean', 'integer', 'number', 'array']);
const itemType = z.enum(['string', 'integer', 'number', 'boolean']);
const scalar = z.union([z.string(), z.number(), z.boolean()]);

const items = z
  .strictObject({
    type: itemType,
    description: z.string().optional(),
    enum: z.array(scalar).min(1).optional(),
    format: format.optional(),
  })
  .describe('The type of each element of an array value.')
  .meta({ id: 'Items' });

export const argumentSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^-{0,2}[A-Za-z0-9][A-Za-z0-9_.-]*$/)
      .describe(
        'Parameter name; an option becomes "--name value". A name that already starts with "-" is used verbatim as the flag.',
      ),
    type: valueType.describe('Value type; an "array" without "items" has string elements.'),
    description: z.string().optional(),
    required: z.boolean().optional().describe('The agent must supply a value. Default false.'),
    format: format.optional(),
    items: items.optional(),
    enum: z.array(scalar).min(1).optional().describe('The only values accepted.'),
    default: z
      .unknown()
      .optional()
      .describe('Used when the agent gives no value; it reaches the command like a given value.'),
    alias: z
      .string()
      .regex(/^[A-Za-z0-9]$/)
      .optional()
      .describe('One-letter short flag: "-x" is passed instead of "--name".'),
    file_arg: z
      .boolean()
      .optional()
      .describe(
        "The value is written to a private temporary file and the file's path is passed instead (for long or multi-line text such as commit messages).",
      ),
    file_flag: z
      .string()
      .regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*$/)
      .optional()
      .describe('With file_arg: the flag that precedes the temporary file\'s path (e.g. "-F").'),
    joined: z
      .boolean()
      .optional()
      .describe(
        'Options only: the value is passed joined to the flag, as one word "--name=value" (for flags a program accepts only that way, like git log --format=).',
      ),
    after_double_dash: z
      .boolean()
      .optional()
      .describe(
        'Positionals only: "--" is passed before this argument\'s values (when it has any), so the program takes none of them, nor anything after, as its own options (`cargo test NAME -- ARGS`).',
      ),
    accepts_options: z
      .boolean()
      .optional()
      .describe(
        'Whether a value may start with "-", which the program may read as an option. Positionals: default false, such a value is refused unless it follows "--" (after_double_dash); true only where that is harmless, like the arguments a runner hands to the script or command it starts (`pnpm run SCRIPT ARGS`). Options: default true, as programs take the argument after a flag as its value; false where the program re-reads such a value as an option (npm\'s string options).',
      ),
  })
  .meta({ id: 'Argument', title: 'Option or positional argument' });

const availabilityCheck = z
  .strictObject({
    command: z.string().min(1).describe('Executable (and leading fixed arguments) to run.'),
    args: z.array(z.string()).optional(),
    success_exit_codes: z
      .array(z.number().int().min(0).max(255))
      .min(1)
      .optional()
      .describe('Exit codes that mean "available". Default [0].'),
    skip_subcommand_args: z
      .boolean()
      .optional()
      .describe(
        'Rust ahma compatibility: do not append the subcommand words to the probe. Ahma always runs the probe exactly as declared (command, then args), so this changes nothing.',
      ),
  })
  .describe('A probe run at startup; when it fails the tool is not offered.')
  .meta({ id: 'AvailabilityCheck' });

const installInstructions = z
  .string()
  .min(1)
  .describe('Logged when the availability check fails: how to install the missing program.');

const sequenceStep = z
  .strictObject({
    tool: z
      .string()
      .min(1)
      .describe(
        'A definition name or a flattened tool name ("cargo", "cargo_fmt", "sandboxed_shell").',
      ),
    subcommand: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Leaf path inside that tool, "_"-joined; "default" or omitted for the tool itself.',
      ),
    args: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Arguments for this step, merged over the caller's non-meta arguments."),
    description: z.string().optional(),
  })
  .meta({ id: 'SequenceStep' });

const sequence = z.array(sequenceStep).min(1).describe('Steps run strictly one after another.');

const stepDelayMs = z
  .number()
  .int()
  .min(0)
  .max(600_000)
  .describe('Pause between sequence steps, in milliseconds.');

// null is allowed: the Rust ahma's files write "build": null for "no hint".
const hintText = z.string().min(1).nullable();
const hints = z
  .strictObject({
    build: hintText.optional(),
    test: hintText.optional(),
    dependencies: hintText.optional(),
    clean: hintText.optional(),
    run: hintText.optional(),
    custom: z
      .record(z.string().min(1), hintText)
      .optional()
      .describe('More hints by topic (for example a subcommand name).'),
  })
  .describe(
    "Advice for the agent (the Rust ahma's hints), appended to every tool's description, at most 500 characters in all.",
  )
  .meta({ id: 'Hints' });

export const subcommandSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/)
      .describe(
        'Subcommand word, passed as one argument ("pr_create" too). Tool names join the path with "_", so two leaves may not produce the same name. "default" collapses into the parent.',
      ),
    description,
    enabled: enabled.optional(),
    synchronous: synchronous.optional(),
    force_synchronous: forceSynchronous.optional(),
    asynchronous: z
      .boolean()
      .optional()
      .describe(
        'Rust ahma tool files of 2025 (rust_quality_check.json): accepted and ignored with a warning, as the Rust ahma ignores it; a subcommand is asynchronous unless "synchronous": true.',
      ),
    timeout_seconds: timeoutSeconds.optional(),
    guidance_key: guidanceKey.optional(),
    availability_check: availabilityCheck.optional(),
    install_instructions: installInstructions.optional(),
    concurrency: concurrency.optional(),
    mutates: mutates.optional(),
    options: z.array(argumentSchema).optional().describe('Flags, passed in declared order.'),
    positional_args: z
      .array(argumentSchema)
      .optional()
      .describe('Positional arguments, passed after the options in declared order.'),
    positional_args_first: z
      .boolean()
      .optional()
      .describe('Pass positional arguments before the options.'),
    get subcommand() {
      return z.array(subcommandSchema).min(1).optional().describe('Nested subcommands.');
    },
    sequence: sequence.optional(),
    step_delay_ms: stepDelayMs.optional(),
  })
  .meta({ id: 'Subcommand' });

// The keys of a tool's top level. The object is open (the Rust ahma's is: it keeps unknown keys for
// its extensions): a key not listed here is accepted and ignored with a warning (normalize.ts).
// Every level below stays strict, so a typo there is still an error with a did-you-mean.
const toolDefinitionShape = {
  $schema: z.string().optional().describe('Path or URL of mtdf-schema.json, for editors.'),
  name: identifier.describe('Tool name; MCP tools are named "<name>_<subcommand path>".'),
  description,
  command: z
    .string()
    .min(1)
    .describe(
      'Executable, optionally followed by fixed leading arguments separated by spaces ("python3 -m"); "sequence" for a sequence tool.',
    ),
  enabled: enabled.optional(),
  timeout_seconds: timeoutSeconds.optional(),
  synchronous: synchronous.optional(),
  force_synchronous: forceSynchronous.optional(),
  guidance_key: guidanceKey.optional(),
  hints: hints.optional(),
  availability_check: availabilityCheck.optional(),
  install_instructions: installInstructions.optional(),
  subcommand: z.array(subcommandSchema).min(1).optional(),
  sequence: sequence.optional(),
  step_delay_ms: stepDelayMs.optional(),
  tool_type: z
    .union([
      toolTypeSchema,
      z
        .string()
        .min(1)
        .describe(
          'Any other kind (the Rust ahma hands it to an extension, e.g. "decompose"): the file loads with a warning and its tools are not offered.',
        ),
    ])
    .optional()
    .describe('The kind of tool. Default "command".'),
  input_schema: z
    .unknown()
    .optional()
    .describe(
      "The Rust ahma's generated input schema: accepted and ignored, with a warning. Ahma generates each tool's inputSchema from its options and positional_args.",
    ),
  concurrency: concurrency.optional(),
  mutates: mutates.optional(),
  livelog: livelogSchema.optional(),
  sandbox_profiles: z
    .array(z.enum(PROFILE_NAMES))
    .min(1)
    .optional()
    .describe(
      'Toolchain profiles (R7.14) the tools need: extra paths they read and write, such as a download cache. Granted only when the operator enables the bundle at start (--tools) or the profile (--profile); otherwise reported with the flag that enables them.',
    ),
  network: z
    .enum(['none', 'proxy', 'host'])
    .optional()
    .describe(
      "What this file's commands may reach on the network (R7.15, R7.16), when less than the server's --network: none (no socket but unix ones), proxy (only allowed hosts, through Ahma's egress proxy) or host. A file can only narrow the server's mode, never widen it.",
    ),
};

export const toolDefinitionSchema = z.looseObject(toolDefinitionShape).meta({
  title: 'Ahma tool definition (MTDF)',
  description:
    'Turns a command-line program into MCP tools. See docs/ for every field. Other keys at this level are ignored, with a warning.',
  additionalProperties: true,
});

/** The keys a tool's top level knows; any other is ignored with a warning. */
export const TOOL_DEFINITION_KEYS: readonly string[] = Object.keys(toolDefinitionShape);

export const toolGuidanceSchema = z
  .strictObject({
    $schema: z.string().optional(),
    guidance_blocks: z
      .record(z.string().regex(/^[A-Za-z0-9_-]+$/), z.string().min(1).max(1000))
      .describe('Guidance texts by key, referenced from tool definitions by guidance_key.'),
  })
  .meta({
    title: 'Ahma tool guidance (tool_guidance.json)',
    description: 'Guidance blocks prepended to tool descriptions.',
  });

// A definition as Ahma uses it: its known keys only (normalize.ts removes the others).
export type ToolDefinition = z.output<z.ZodObject<typeof toolDefinitionShape>>;
export type SubcommandDefinition = z.infer<typeof subcommandSchema>;
export type ArgumentDefinition = z.infer<typeof argumentSchema>;
export type SequenceStep = z.infer<typeof sequenceStep>;
export type AvailabilityCheck = z.infer<typeof availabilityCheck>;
export type Hints = z.infer<typeof hints>;
export type ToolGuidance = z.infer<typeof toolGuidanceSchema>;
export type WorkspaceLane = (typeof WORKSPACE_LANES)[number];
