// The livelog part of the format (SPEC §2 Compatibility): tool_type + livelog{…} as upstream
// writes them, the defaults, the flattened leaf, the inputSchema, and the checks with pointers.
import { describe, expect, it } from 'vitest';
import { leafInputSchema } from '../../src/definition/input-schema.js';
import { LIVELOG_DEFAULTS } from '../../src/definition/livelog-schema.js';
import { mtdfJsonSchema } from '../../src/definition/json-schema.js';
import { checkDocuments, diagnosticsFor, fixture, leavesOf, validateOne } from './helpers.js';

const monitor = (livelog: Record<string, unknown> = {}, tool: Record<string, unknown> = {}) => ({
  name: 'watch',
  description: 'Watch the log.',
  command: 'tail',
  tool_type: 'livelog',
  livelog: {
    source_command: 'tail',
    source_args: ['-F', 'app.log'],
    detection_prompt: 'Look for panics.',
    llm_provider: { base_url: 'http://localhost:11434/v1', model: 'llama3.2' },
    ...livelog,
  },
  ...tool,
});

const pointers = (document: unknown) =>
  diagnosticsFor(document).map((d) => [d.pointer, d.message, d.hint]);

describe('livelog format', () => {
  it('SPEC §2 livelog: upstream rust-log-monitor.json and android-logcat.json raise nothing about tool_type or livelog', async () => {
    for (const name of ['rust-log-monitor.json', 'android-logcat.json']) {
      const diagnostics = await validateOne(fixture('upstream-livelog', name));
      // `hints` is another compatibility key, added separately; nothing else may be refused.
      expect(diagnostics.filter((d) => !d.pointer.startsWith('/hints'))).toEqual([]);
    }
  });

  it('SPEC §2 livelog: a livelog tool flattens to one leaf carrying its settings with upstream defaults', () => {
    const [leaf, ...rest] = leavesOf(monitor({}, { name: 'watch' }));
    expect(rest).toEqual([]);
    expect(leaf?.name).toBe('watch');
    expect(leaf?.synchronous).toBe(false);
    expect(leaf?.livelog).toEqual({
      sourceCommand: 'tail',
      sourceArgs: ['-F', 'app.log'],
      detectionPrompt: 'Look for panics.',
      baseUrl: 'http://localhost:11434/v1',
      model: 'llama3.2',
      apiKeyVariable: undefined,
      chunkMaxLines: 50,
      chunkMaxSeconds: 30,
      cooldownSeconds: 60,
      llmTimeoutSeconds: 30,
      parameters: [],
      env: {},
      clearArgs: undefined,
      prefilter: undefined,
    });
    expect(LIVELOG_DEFAULTS).toEqual({
      chunkMaxLines: 50,
      chunkMaxSeconds: 30,
      cooldownSeconds: 60,
      llmTimeoutSeconds: 30,
    });
  });

  it('SPEC §2 livelog: given settings win, a trailing "/" of base_url goes, api_key names its variable', () => {
    const [leaf] = leavesOf(
      monitor({
        llm_provider: { base_url: 'https://llm.example/v1/', model: 'm', api_key: '${MY_KEY}' },
        chunk_max_lines: 3,
        chunk_max_seconds: 2,
        cooldown_seconds: 0,
        llm_timeout_seconds: 5,
      }),
    );
    expect(leaf?.livelog).toMatchObject({
      baseUrl: 'https://llm.example/v1',
      apiKeyVariable: 'MY_KEY',
      chunkMaxLines: 3,
      chunkMaxSeconds: 2,
      cooldownSeconds: 0,
      llmTimeoutSeconds: 5,
    });
  });

  it('SPEC §2 livelog: a command tool has no livelog settings, with or without tool_type "command"', () => {
    const plain = { name: 'plain', description: 'd', command: 'true' };
    expect(leavesOf(plain)[0]?.livelog).toBeUndefined();
    expect(leavesOf({ ...plain, tool_type: 'command' })[0]?.livelog).toBeUndefined();
  });

  it('SPEC §2 livelog: the inputSchema takes the meta-parameters only', () => {
    const [leaf] = leavesOf(monitor());
    if (leaf === undefined) throw new Error('no leaf');
    const schema = leafInputSchema(leaf);
    expect(Object.keys(schema['properties'] as object)).toEqual([
      'working_directory',
      'timeout_seconds',
      'max_output_tokens',
    ]);
    expect(schema['additionalProperties']).toBe(false);
  });

  it('SPEC §2 livelog: the published JSON Schema describes tool_type and livelog', () => {
    const schema = JSON.stringify(mtdfJsonSchema());
    for (const key of [
      'tool_type',
      'livelog',
      'source_command',
      'llm_provider',
      'cooldown_seconds',
    ]) {
      expect(schema).toContain(`"${key}"`);
    }
  });
});

describe('livelog checks', () => {
  it('R5.2 livelog: livelog without tool_type "livelog" is refused at /livelog', () => {
    const withoutType: Record<string, unknown> = monitor();
    delete withoutType['tool_type'];
    expect(pointers(withoutType)).toEqual([
      [
        '/livelog',
        '"livelog" is used only by a livelog tool',
        'add "tool_type": "livelog", or remove "livelog"',
      ],
    ]);
  });

  it('R5.2 livelog: tool_type "livelog" without livelog is refused at /tool_type', () => {
    const withoutBlock: Record<string, unknown> = monitor();
    delete withoutBlock['livelog'];
    expect(pointers(withoutBlock)).toEqual([
      [
        '/tool_type',
        '"tool_type": "livelog" needs a "livelog" block',
        expect.stringContaining('"source_command"'),
      ],
    ]);
  });

  it('R5.2 livelog: base_url must be an http(s) URL without credentials or query', () => {
    const at = '/livelog/llm_provider/base_url';
    const withUrl = (base_url: string) =>
      pointers(monitor({ llm_provider: { base_url, model: 'm' } }));
    expect(withUrl('ftp://host/v1')).toEqual([
      [
        at,
        'base_url must be an http:// or https:// URL, not "ftp:"',
        'e.g. "http://localhost:11434/v1"',
      ],
    ]);
    expect(withUrl('localhost:11434')[0]?.[0]).toBe(at);
    expect(withUrl('not a url')[0]?.[1]).toBe('base_url "not a url" is not a URL');
    expect(withUrl('https://user:secret@host/v1')[0]?.[1]).toMatch(/must not carry credentials/);
    expect(withUrl('https://host/v1?key=1')[0]?.[1]).toMatch(/no query or fragment/);
    expect(withUrl('https://host/v1')).toEqual([]);
  });

  it('R5.2 livelog: a literal api_key is refused; only "${NAME}" is accepted', () => {
    const withKey = (api_key: string) =>
      pointers(monitor({ llm_provider: { base_url: 'http://h/v1', model: 'm', api_key } }));
    const [refused] = withKey('sk-abcdef1234567890');
    expect(refused?.[0]).toBe('/livelog/llm_provider/api_key');
    expect(refused?.[1]).toMatch(/never holds the key itself/);
    expect(withKey('$OPENAI_API_KEY')).toHaveLength(1);
    expect(withKey('${OPENAI_API_KEY}')).toEqual([]);
  });

  it('R5.2 livelog: a livelog tool is one asynchronous tool: no subcommands, no sequence, not synchronous', () => {
    expect(
      pointers(monitor({}, { subcommand: [{ name: 'run', description: 'r' }] })).map((d) => d[0]),
    ).toEqual(['/subcommand']);
    expect(pointers(monitor({}, { synchronous: true })).map((d) => d[0])).toEqual(['/synchronous']);
    expect(
      pointers(monitor({}, { command: 'sequence', sequence: [{ tool: 'x' }] })).map((d) => d[0]),
    ).toContain('/sequence');
  });

  it('R5.2 livelog: source_command is one program; arguments belong in source_args', () => {
    expect(pointers(monitor({ source_command: 'tail -F' }))).toEqual([
      [
        '/livelog/source_command',
        'source_command is one program, passed as one argv element',
        'put its arguments in "source_args"',
      ],
    ]);
  });

  it('R5.2 livelog: a bad tool_type and out-of-range numbers are schema errors', () => {
    expect(diagnosticsFor(monitor({}, { tool_type: 'worker' }))[0]?.pointer).toBe('/tool_type');
    expect(diagnosticsFor(monitor({ chunk_max_lines: 0 }))[0]?.pointer).toBe(
      '/livelog/chunk_max_lines',
    );
    expect(diagnosticsFor(monitor({ llm_provider: { base_url: 'http://h' } }))[0]?.pointer).toBe(
      '/livelog/llm_provider/model',
    );
  });

  it('SPEC §9 livelog: a sequence step calling a livelog tool is refused (a monitor never ends)', () => {
    const outcome = checkDocuments({
      'watch.json': monitor(),
      'seq.json': {
        name: 'seq',
        description: 'd',
        command: 'sequence',
        sequence: [{ tool: 'watch' }],
      },
    });
    expect(outcome.diagnostics.map((d) => [d.file, d.pointer, d.message])).toEqual([
      [
        'seq.json',
        '/sequence/0/tool',
        'step calls "watch", a livelog tool, which runs until it is cancelled',
      ],
    ]);
  });
});
