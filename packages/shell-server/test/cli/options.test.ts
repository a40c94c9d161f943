// ahma-shell's read and write options (R7.10), toolchain profiles (R7.14), the network mode
// (R7.15) and the output budget (R15.2): comma lists, repeatable, each with its AHMA_* variable;
// paths absolute or ~/; an unknown profile, a relative path or a budget out of bounds is a usage
// error that says what is wrong.
import { describe, expect, it } from 'vitest';
import { parseCommandLine, USAGE } from '../../src/cli/options.js';
import type { ServerOptions } from '../../src/runtime/settings.js';

function options(argv: string[], env: Record<string, string> = {}): ServerOptions {
  const parsed = parseCommandLine(['--mode', 'stdio', ...argv], env);
  if (parsed.kind !== 'run')
    throw new Error(`not a server command line: ${JSON.stringify(parsed)}`);
  return parsed.options;
}

function usageError(argv: string[], env: Record<string, string> = {}): string {
  const parsed = parseCommandLine(['--mode', 'stdio', ...argv], env);
  if (parsed.kind !== 'usage') throw new Error(`not refused: ${JSON.stringify(parsed)}`);
  return parsed.error ?? '';
}

describe('--allow-read, --deny-read, --allow-write', () => {
  it('R7.10: none by default', () => {
    expect(options([])).toMatchObject({
      allowRead: [],
      denyRead: [],
      allowWrite: [],
      profiles: [],
    });
  });

  it('R7.10: comma lists, repeatable, ~/ and absolute paths kept as given', () => {
    expect(
      options([
        '--allow-read',
        '~/data, /opt/sdk',
        '--allow-read',
        '/srv/ref',
        '--deny-read',
        '~/.config/secret',
        '--allow-write',
        '~/.cache/tool,/var/cache/tool',
      ]),
    ).toMatchObject({
      allowRead: ['~/data', '/opt/sdk', '/srv/ref'],
      denyRead: ['~/.config/secret'],
      allowWrite: ['~/.cache/tool', '/var/cache/tool'],
    });
  });

  it('R7.10: AHMA_ALLOW_READ, AHMA_DENY_READ and AHMA_ALLOW_WRITE stand in for the flags; a flag replaces its variable', () => {
    const env = {
      AHMA_ALLOW_READ: '/a,/b',
      AHMA_DENY_READ: '~/x',
      AHMA_ALLOW_WRITE: '/w',
    };
    expect(options([], env)).toMatchObject({
      allowRead: ['/a', '/b'],
      denyRead: ['~/x'],
      allowWrite: ['/w'],
    });
    expect(options(['--allow-read', '/c'], env).allowRead).toEqual(['/c']);
  });

  it.each([
    ['--allow-read', 'data'],
    ['--deny-read', './secret'],
    ['--allow-write', '~user/x'],
    ['--allow-write', '/ok,relative'],
  ])('R7.10: %s %s (a relative path) is a usage error', (flag, value) => {
    expect(usageError([flag, value])).toMatch(
      new RegExp(`^${flag} .*: a path must be absolute or start with ~/`),
    );
  });

  it('R7.10: a relative path from the environment is refused the same way', () => {
    expect(usageError([], { AHMA_ALLOW_WRITE: 'build' })).toMatch(
      /--allow-write build: a path must/,
    );
  });
});

describe('--profile', () => {
  it('R7.14: names known profiles, comma list and repeatable, each once', () => {
    expect(options(['--profile', 'cargo,rustup', '--profile', 'android,cargo']).profiles).toEqual([
      'cargo',
      'rustup',
      'android',
    ]);
    expect(options([], { AHMA_PROFILE: 'npm, pip' }).profiles).toEqual(['npm', 'pip']);
  });

  it('R7.14: an unknown profile is a usage error naming the closest and every known one', () => {
    const error = usageError(['--profile', 'cargo,gradel']);
    expect(error).toMatch(
      /^--profile: unknown sandbox profile "gradel" \(did you mean "gradle"\?\)/,
    );
    expect(error).toMatch(/cargo, rustup, npm/);
    expect(usageError([], { AHMA_PROFILE: 'nope' })).toMatch(/unknown sandbox profile "nope"/);
  });

  it('R7.14, R7.10: the usage lists the options and every profile', () => {
    for (const flag of [
      '--profile NAME',
      '--allow-read PATH',
      '--deny-read PATH',
      '--allow-write PATH',
    ]) {
      expect(USAGE).toContain(flag);
    }
    expect(USAGE).toMatch(/cargo, rustup, npm, pnpm, pip, go, gradle, maven, android/);
  });
});

describe('--network', () => {
  it('R7.15, R7.16: host by default; proxy or none from the flag or AHMA_NETWORK; anything else is a usage error', () => {
    expect(options([]).network).toBe('host');
    expect(options(['--network', 'none']).network).toBe('none');
    expect(options(['--network', 'proxy']).network).toBe('proxy');
    expect(options([], { AHMA_NETWORK: 'none' }).network).toBe('none');
    expect(options(['--network', 'host'], { AHMA_NETWORK: 'none' }).network).toBe('host');
    expect(usageError(['--network', 'socks'])).toBe(
      '--network must be "host", "proxy" or "none", not "socks"',
    );
  });

  it('R7.17: --allow-host and --deny-host take comma lists (repeatable, or AHMA_ALLOW_HOST / AHMA_DENY_HOST); a malformed rule is a usage error', () => {
    const parsed = options([
      '--allow-host',
      'registry.npmjs.org,*.crates.io',
      '--allow-host',
      '127.0.0.1:5432',
      '--deny-host',
      'evil.example',
    ]);
    expect(parsed.allowHosts).toEqual(['registry.npmjs.org', '*.crates.io', '127.0.0.1:5432']);
    expect(parsed.denyHosts).toEqual(['evil.example']);
    expect(options([], { AHMA_ALLOW_HOST: 'pypi.org' }).allowHosts).toEqual(['pypi.org']);
    expect(options([]).allowHosts).toEqual([]);
    expect(usageError(['--allow-host', '*'])).toMatch(/^--allow-host \*: /);
    expect(usageError(['--deny-host', 'https://x.example/'])).toMatch(
      /^--deny-host https:\/\/x\.example\/: /,
    );
  });
});

describe('--max-output-tokens', () => {
  it('R15.2: 10,000 by default; the flag or AHMA_MAX_OUTPUT_TOKENS sets it (the flag wins); a whole number from 100 to 200,000', () => {
    expect(options([]).maxOutputTokens).toBe(10_000);
    expect(options(['--max-output-tokens', '2500']).maxOutputTokens).toBe(2500);
    expect(options([], { AHMA_MAX_OUTPUT_TOKENS: '100' }).maxOutputTokens).toBe(100);
    expect(
      options(['--max-output-tokens', '200000'], { AHMA_MAX_OUTPUT_TOKENS: '500' }).maxOutputTokens,
    ).toBe(200_000);
    for (const bad of ['99', '200001', '1.5', 'many', '', ' ', '-1', '1e3x']) {
      expect(usageError([`--max-output-tokens=${bad}`])).toBe(
        '--max-output-tokens must be a whole number of tokens from 100 to 200000',
      );
    }
    expect(usageError([], { AHMA_MAX_OUTPUT_TOKENS: '50' })).toMatch(/^--max-output-tokens/);
    expect(USAGE).toContain('--max-output-tokens N');
  });
});

describe('--ops-page', () => {
  it('SPEC §15 operations page: off by default; bare (last, or before another flag) any free port; a port; AHMA_OPS_PAGE; refused for HTTP and for a non-port', () => {
    expect(options([]).opsPage).toBeUndefined();
    expect(options(['--ops-page']).opsPage).toBe(0);
    expect(options(['--ops-page', '--sync']).opsPage).toBe(0);
    expect(options(['--ops-page', '8099']).opsPage).toBe(8099);
    expect(options(['--ops-page=8098']).opsPage).toBe(8098);
    expect(options([], { AHMA_OPS_PAGE: '8097' }).opsPage).toBe(8097);
    expect(usageError(['--ops-page', 'x'])).toMatch(/--ops-page takes a port number/);
    expect(usageError(['--ops-page', '70000'])).toMatch(/--ops-page takes a port number/);
    const http = parseCommandLine(['--mode', 'http', '--ops-page'], {});
    expect(http).toMatchObject({
      kind: 'usage',
      error: expect.stringMatching(/serves the page at \/ops/),
    });
  });
});

describe('AHMA_TEST_TIMINGS (test only)', () => {
  it('R7.6: shortens the stop waits the engine gets, never lengthens them; anything else is a usage error', () => {
    const run = (text: string) =>
      parseCommandLine(['--mode', 'stdio'], { AHMA_TEST_TIMINGS: text });
    expect(run('')).toMatchObject({ kind: 'run', options: { testTimings: {} } });
    expect(run('{"graceMs":300,"watchdogMs":500}')).toMatchObject({
      kind: 'run',
      options: { testTimings: { graceMs: 300, watchdogMs: 500 } },
    });
    for (const bad of ['{"graceMs":5000}', '{"graceMs":0}', '{"nope":1}', '[1]', 'not json']) {
      expect(run(bad), bad).toMatchObject({
        kind: 'usage',
        error: expect.stringContaining('AHMA_TEST_TIMINGS must be a JSON object') as string,
      });
    }
  });
});
