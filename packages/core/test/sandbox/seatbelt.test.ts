// R7.3: the macOS Seatbelt profile and sandbox-exec command line; R7.10: its read deny rules.
// sandbox-exec cannot run on Linux, so the profile is checked as text, and its decisions by a
// small evaluator of the SBPL it uses (subpath, literal, regex, param, require-all/-not), where
// the last matching rule wins, as Seatbelt does.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AhmaError } from '../../src/errors.js';
import {
  PRIVATE_STATE_LIST,
  shippedDenies,
  type DenyEntry,
} from '../../src/sandbox/read-policy.js';
import {
  NO_READ_RULES,
  SANDBOX_EXEC,
  seatbeltArgv,
  seatbeltProfile,
  seatbeltReads,
  type SeatbeltProfile,
  type SeatbeltReads,
} from '../../src/sandbox/seatbelt.js';

const home = '/Users/agent';
const scope = '/Users/agent/Projects/my app (v2)';
const state = '/Users/agent/Library/Application Support/ahma';
const cache = `${state}/caches/server-1`;
const writable = [scope, '/private/var/folders/xy/T', cache];

function deny(path: string, list = '--deny-read', except: string[] = []): DenyEntry {
  return { path, except, list, why: 'test' };
}

/** The policy createSandbox hands macOS: shipped lists, --deny-read, the state; --allow-read. */
function policyReads(): SeatbeltReads {
  return seatbeltReads(
    [
      ...shippedDenies(home),
      deny(`${scope}/config/.env`),
      deny('/opt/team-secrets'),
      deny(state, PRIVATE_STATE_LIST),
    ],
    [`${home}/.aws/config`, `${home}/.ssh`, `${home}/.config`],
  );
}

const profile = seatbeltProfile(writable, policyReads());

// ---- A small SBPL reader and evaluator ----

type Sexp = string | { readonly text: string } | Sexp[];

/** The forms of `source`: lists, symbols, "strings" (with \ escapes) and #"raw strings". */
function parse(source: string): Sexp[] {
  const stack: Sexp[][] = [[]];
  let i = 0;
  const top = () => stack[stack.length - 1] ?? [];
  while (i < source.length) {
    const c = source[i] ?? '';
    if (/\s/.test(c)) i++;
    else if (c === ';')
      i = source.indexOf('\n', i) === -1 ? source.length : source.indexOf('\n', i);
    else if (c === '(') {
      const list: Sexp[] = [];
      top().push(list);
      stack.push(list);
      i++;
    } else if (c === ')') {
      if (stack.length === 1) throw new Error(`unbalanced ) at ${String(i)}`);
      stack.pop();
      i++;
    } else if (c === '#' && source[i + 1] === '"') {
      const end = source.indexOf('"', i + 2);
      if (end === -1) throw new Error('unterminated #"');
      top().push({ text: source.slice(i + 2, end) });
      i = end + 1;
    } else if (c === '"') {
      let text = '';
      for (i++; source[i] !== '"'; i++) {
        if (i >= source.length) throw new Error('unterminated "');
        if (source[i] === '\\') i++;
        text += source[i] ?? '';
      }
      top().push({ text });
      i++;
    } else {
      const symbol = /^[^\s()";]+/.exec(source.slice(i))?.[0] ?? '';
      top().push(symbol);
      i += symbol.length;
    }
  }
  if (stack.length !== 1) throw new Error('unbalanced (');
  return stack[0] ?? [];
}

interface Rule {
  readonly action: string;
  readonly operations: readonly string[];
  readonly filters: readonly Sexp[];
}

function rulesOf(text: string): Rule[] {
  return parse(text).flatMap((form) => {
    if (!Array.isArray(form)) throw new Error('a top-level atom');
    const [action, ...rest] = form;
    if (action !== 'allow' && action !== 'deny') return [];
    const operations = rest.filter((x): x is string => typeof x === 'string');
    return [{ action, operations, filters: rest.filter((x) => typeof x !== 'string') }];
  });
}

function parameterMap(p: SeatbeltProfile): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i < p.parameters.length; i += 2) {
    expect(p.parameters[i]).toBe('-D');
    const pair = p.parameters[i + 1] ?? '';
    const at = pair.indexOf('=');
    expect(map.has(pair.slice(0, at)), `${pair.slice(0, at)} passed twice`).toBe(false);
    map.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return map;
}

function stringOf(x: Sexp | undefined, params: Map<string, string>): string {
  if (x !== undefined && typeof x === 'object' && !Array.isArray(x)) return x.text;
  if (Array.isArray(x) && x[0] === 'param') {
    const name = stringOf(x[1], params);
    const value = params.get(name);
    if (value === undefined) throw new Error(`no -D for ${name}`);
    return value;
  }
  throw new Error(`not a string: ${JSON.stringify(x)}`);
}

function matches(filter: Sexp, path: string, params: Map<string, string>): boolean {
  if (!Array.isArray(filter)) throw new Error(`not a filter: ${JSON.stringify(filter)}`);
  const [head, ...args] = filter;
  switch (head) {
    case 'subpath': {
      const dir = stringOf(args[0], params);
      return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
    }
    case 'literal':
      return path === stringOf(args[0], params);
    case 'regex':
      return new RegExp(stringOf(args[0], params), 's').test(path);
    case 'require-all':
      return args.every((f) => matches(f, path, params));
    case 'require-any':
      return args.some((f) => matches(f, path, params));
    case 'require-not':
      return !matches(args[0] ?? [], path, params);
    default:
      return false; // (target …), (global-name …): not about paths
  }
}

function covers(ruleOperation: string, operation: string): boolean {
  return (
    ruleOperation === 'default' ||
    ruleOperation === operation ||
    (ruleOperation.endsWith('*') && operation.startsWith(ruleOperation.slice(0, -1)))
  );
}

type Model = 'last-match' | 'deny-wins';

const compiledProfiles = new WeakMap<
  SeatbeltProfile,
  { params: Map<string, string>; rules: Rule[] }
>();

function compiled(p: SeatbeltProfile): { params: Map<string, string>; rules: Rule[] } {
  let known = compiledProfiles.get(p);
  if (known === undefined) {
    known = { params: parameterMap(p), rules: rulesOf(p.text) };
    compiledProfiles.set(p, known);
  }
  return known;
}

/** Seatbelt's answer for `operation` on `path`: the last matching rule (or any deny) decides. */
function decide(
  p: SeatbeltProfile,
  operation: string,
  path: string,
  model: Model = 'last-match',
): 'allow' | 'deny' {
  const { params, rules } = compiled(p);
  let answer: 'allow' | 'deny' = 'deny';
  let denied = false;
  for (const rule of rules) {
    if (!rule.operations.some((op) => covers(op, operation))) continue;
    const hit =
      rule.filters.length === 0 || rule.filters.some((filter) => matches(filter, path, params));
    if (!hit) continue;
    answer = rule.action === 'allow' ? 'allow' : 'deny';
    if (rule.action === 'deny' && !rule.operations.includes('default')) denied = true;
  }
  return model === 'deny-wins' && denied ? 'deny' : answer;
}

const read = (path: string, p = profile, model?: Model) => decide(p, 'file-read-data', path, model);
const write = (path: string, p = profile) => decide(p, 'file-write-data', path);

/** The regex texts of a profile. */
function regexes(text: string): string[] {
  return [...text.matchAll(/\(regex #"([^"]*)"\)/g)].map((m) => m[1] ?? '');
}

/** The top-level s-expressions of a line, or undefined when its parentheses do not balance. */
function topLevelForms(line: string): number | undefined {
  try {
    return parse(line).length;
  } catch {
    return undefined;
  }
}

function refusal(run: () => unknown): AhmaError {
  try {
    run();
  } catch (error) {
    if (error instanceof AhmaError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

// ---- Tests ----

describe('seatbeltProfile', () => {
  it('R7.15: --network none drops the network allowance (deny default then refuses it)', () => {
    expect(seatbeltProfile([]).text).toContain('(allow network*)');
    expect(seatbeltProfile([], undefined, { mode: 'host' }).text).toContain('(allow network*)');
    expect(seatbeltProfile([], undefined, { mode: 'none' }).text).not.toMatch(/network/);
  });

  it('R7.16: --network proxy allows outbound connections to localhost:PORT alone, no bind, no inbound', () => {
    const text = seatbeltProfile(writable, policyReads(), { mode: 'proxy', proxyPort: 41234 }).text;
    const networkRules = rulesOf(text).filter((rule) =>
      rule.operations.some((op) => op.startsWith('network')),
    );
    // One rule, whose only operation is network-outbound, whose only filter is that address.
    expect(networkRules).toEqual([
      {
        action: 'allow',
        operations: ['network-outbound'],
        filters: [['remote', 'ip', { text: 'localhost:41234' }]],
      },
    ]);
    expect(text).toContain('(allow network-outbound (remote ip "localhost:41234"))');
    expect(text).not.toContain('(allow network*)');
    expect(text).not.toMatch(/network-bind|network-inbound/);
    // Everything else is the same profile as with --network none.
    const none = seatbeltProfile(writable, policyReads(), { mode: 'none' }).text;
    expect(text.split('\n').filter((line) => !line.includes('network'))).toEqual(none.split('\n'));
  });

  it('R7.16: --network proxy without a valid port is refused (CONFIG_INVALID)', () => {
    for (const proxyPort of [undefined, 0, 65536, 1.5, Number.NaN]) {
      expect(refusal(() => seatbeltProfile([], undefined, { mode: 'proxy', proxyPort })).code).toBe(
        'CONFIG_INVALID',
      );
    }
  });

  it('R7.3: starts with (version 1) and (deny default)', () => {
    for (const p of [seatbeltProfile(writable), profile]) {
      const lines = p.text.split('\n');
      expect(lines[0]).toBe('(version 1)');
      expect(lines[1]).toBe('(deny default)');
    }
  });

  it('R7.3: one rule per line, each a single balanced form', () => {
    const lines = profile.text.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(50);
    for (const line of lines) {
      expect(line, line).toMatch(/^\(.*\)$/);
      expect(topLevelForms(line), line).toBe(1);
    }
  });

  it('R7.3: writable roots are referenced only as (param "WRITABLE_n"), one rule each', () => {
    const text = seatbeltProfile(writable).text;
    for (const index of [0, 1, 2]) {
      expect(text).toContain(`(allow file-write* (subpath (param "WRITABLE_${String(index)}")))`);
    }
    expect(text).not.toContain('WRITABLE_3');
    expect(seatbeltProfile([]).text).not.toContain('WRITABLE_');
    // Everything else that allows writing is a fixed system path, never a caller's path.
    const writeRules = profile.text
      .split('\n')
      .filter((line) => line.startsWith('(allow file-write*'));
    expect(writeRules.length).toBeGreaterThan(3);
    for (const rule of writeRules) {
      expect(rule).toMatch(/\(param "WRITABLE_\d+"\)|"\/private\/|"\/dev\/|#"\^\/dev\//);
    }
  });

  it('R7.3: allows writes to /private/tmp and /private/var/folders', () => {
    const text = seatbeltProfile(writable).text;
    expect(text).toContain('(allow file-write* (subpath "/private/tmp"))');
    expect(text).toContain('(allow file-write* (subpath "/private/var/folders"))');
    expect(write('/private/tmp/x', seatbeltProfile([]))).toBe('allow');
    expect(write(`${scope}/src/a.ts`, seatbeltProfile(writable))).toBe('allow');
    expect(write(`${home}/.bashrc`, seatbeltProfile(writable))).toBe('deny');
  });

  it('R7.10: without read rules every path is readable and nothing is denied by name', () => {
    const open = seatbeltProfile(writable, NO_READ_RULES);
    expect(open.text).not.toMatch(/\(deny file-read/);
    expect(read(`${home}/.ssh/id_ed25519`, open)).toBe('allow');
    expect(open.parameters).toEqual(
      writable.flatMap((path, index) => ['-D', `WRITABLE_${String(index)}=${path}`]),
    );
  });
});

describe('the Seatbelt read deny rules', () => {
  it('R7.10: denies reading and writing every shipped entry, beneath it, and under /private', () => {
    const entries = shippedDenies(home);
    expect(entries.length).toBeGreaterThan(40);
    for (const entry of entries) {
      const sample = entry.path.replace(/\*/g, 'sample').replace(/\?/g, 's');
      const spellings = /^\/(etc|tmp|var)\//.test(sample)
        ? [sample, `/private${sample}`]
        : [sample];
      for (const path of spellings.flatMap((s) => [s, `${s}/inside`])) {
        expect(read(path), path).toBe('deny');
        expect(write(path), path).toBe('deny');
      }
    }
    for (const path of [
      `${home}/.ssh/id_ed25519`,
      `${home}/.aws/credentials`,
      `${home}/.config/gh/hosts.yml`,
      `${home}/.mozilla/firefox/abc.default/logins.json`,
      `${home}/.config/google-chrome/Default/Cookies`,
      '/private/etc/shadow',
      '/etc/shadow',
      '/private/etc/ssh/ssh_host_ed25519_key',
      '/private/etc/sudoers.d/admins',
    ]) {
      expect(read(path), path).toBe('deny');
    }
  });

  it('R7.10: the rest stays readable: system files, HOME, the scope, the ~/.ssh directory itself', () => {
    for (const path of [
      '/private/etc/passwd',
      '/usr/bin/git',
      `${home}/.bashrc`,
      `${home}/.ssh`,
      `${home}/.config/git/config`,
      '/private/etc/ssh/ssh_config',
      '/private/etc/ssh/ssh_host_ed25519_key.pub',
      `${scope}/src/index.ts`,
    ]) {
      expect(read(path), path).toBe('allow');
    }
  });

  it("R7.10: ~/.ssh's exceptions stay readable; a name merely starting like one does not", () => {
    for (const name of [
      'known_hosts',
      'known_hosts.old',
      'config',
      'config.d/work',
      'id_ed25519.pub',
      'authorized_keys',
    ]) {
      expect(read(`${home}/.ssh/${name}`), name).toBe('allow');
    }
    for (const name of ['known_hostsX', 'configX', 'id_ed25519', 'id_rsa.pub.bak', 'keys/id_rsa']) {
      expect(read(`${home}/.ssh/${name}`), name).toBe('deny');
    }
  });

  it("R7.10: Ahma's private state is denied; the cache inside it is readable and writable", () => {
    expect(read(`${state}/tokens.json`)).toBe('deny');
    expect(read(`${state}/logs/op-1.log`)).toBe('deny');
    expect(write(`${state}/tokens.json`)).toBe('deny');
    expect(read(`${cache}/npm/_cacache/index`)).toBe('allow');
    expect(write(`${cache}/npm/_cacache/index`)).toBe('allow');
    // The directories on the way can be stat'ed (realpath needs it), not listed.
    for (const dir of [state, `${state}/caches`]) {
      expect(decide(profile, 'file-read-metadata', dir), dir).toBe('allow');
      expect(read(dir), dir).toBe('deny');
    }
    expect(decide(profile, 'file-read-metadata', `${state}/tokens.json`)).toBe('deny');
  });

  it('R7.10: --deny-read is denied, also inside the writable scope, whose other files stay writable', () => {
    expect(read('/opt/team-secrets/prod.key')).toBe('deny');
    expect(read(`${scope}/config/.env`)).toBe('deny');
    expect(write(`${scope}/config/.env`)).toBe('deny');
    expect(write(`${scope}/config/app.json`)).toBe('allow');
    // The directory holding it cannot be renamed away from its rule; its siblings can.
    expect(decide(profile, 'file-write-unlink', `${scope}/config`)).toBe('deny');
    expect(decide(profile, 'file-write-unlink', `${scope}/config/app.json`)).toBe('allow');
    expect(decide(profile, 'file-write-unlink', `${scope}/src`)).toBe('allow');
  });

  it('R7.10: --allow-read opens a path inside a denied one, never a denied path inside it', () => {
    expect(read(`${home}/.aws/config`)).toBe('allow');
    expect(read(`${home}/.aws/credentials`)).toBe('deny');
    // --allow-read ~/.ssh and ~/.config contain denies: those still apply (as on Linux).
    expect(read(`${home}/.ssh/id_ed25519`)).toBe('deny');
    expect(read(`${home}/.config/gh/hosts.yml`)).toBe('deny');
    expect(read(`${home}/.config/nvim/init.lua`)).toBe('allow');
  });

  it('R7.10: the answer does not hang on rule order: no read or write allow follows a deny', () => {
    const lines = profile.text.split('\n');
    const firstDeny = lines.findIndex((line) => line.startsWith('(deny file-read*'));
    expect(firstDeny).toBeGreaterThan(lines.indexOf('(allow file-read*)'));
    const after = lines.slice(firstDeny).filter((line) => line.startsWith('(allow file-'));
    for (const line of after) expect(line).toMatch(/^\(allow file-read-metadata \(literal /);
    // Reading contents and writing get the same answers if any matching deny wins instead.
    for (const path of [
      `${home}/.ssh/id_ed25519`,
      `${home}/.ssh/known_hosts`,
      `${home}/.aws/config`,
      `${cache}/x`,
      `${state}/x`,
      '/private/etc/shadow',
      `${scope}/config/.env`,
    ]) {
      expect(read(path, profile, 'deny-wins'), path).toBe(read(path));
    }
  });

  it('R7.10: every (param "…") has exactly one -D, and every -D is referenced', () => {
    const referenced = new Set(
      [...profile.text.matchAll(/\(param "([A-Z_0-9]+)"\)/g)].map((m) => m[1]),
    );
    const passed = parameterMap(profile); // fails on a name passed twice
    expect(new Set(passed.keys())).toEqual(referenced);
    expect([...passed.keys()].every((name) => /^[A-Z]+_\d+$/.test(name))).toBe(true);
    expect(passed.get('WRITABLE_0')).toBe(scope);
    expect([...passed.values()]).toEqual(
      expect.arrayContaining([state, '/etc/shadow', '/private/etc/shadow', `${home}/.aws/config`]),
    );
  });

  it('R7.10: no path of the policy is in the profile text, but in a regex built and escaped', () => {
    const outsideRegexes = profile.text.replace(/\(regex #"[^"]*"\)/g, '(regex)');
    for (const word of ['/Users', 'shadow', '.aws', 'Application Support', 'team-secrets']) {
      expect(outsideRegexes).not.toContain(word);
    }
    // Each regex is a directory escaped whole, then a translated glob.
    const built = regexes(profile.text).filter((regex) => !regex.startsWith('^/dev/'));
    expect(built).toContain('^/Users/agent/\\.ssh/[^/]*(/.*)?$');
    expect(built).toContain('^/Users/agent/\\.ssh/[^/]*\\.pub(/.*)?$');
    expect(built).toContain('^/private/etc/ssh/ssh_host_[^/]*_key(/.*)?$');
    for (const regex of built) expect(regex).toMatch(/^\^\/[^"]*\(\/\.\*\)\?\$$/);
  });
});

describe('hostile paths in the Seatbelt profile', () => {
  const hostileHome = "/Users/o'neil (x) [1] {2} $a^b|c+d.e*f?g;h #i";

  it('R7.10: a HOME with regex and Scheme syntax in its name is escaped whole', () => {
    const p = seatbeltProfile([], seatbeltReads(shippedDenies(hostileHome), []));
    for (const line of p.text.split('\n').filter((l) => l !== '')) {
      expect(topLevelForms(line), line).toBe(1);
    }
    expect(read(`${hostileHome}/.ssh/id_ed25519`, p)).toBe('deny');
    expect(read(`${hostileHome}/.ssh/known_hosts`, p)).toBe('allow');
    expect(read(`${hostileHome}/.aws/credentials`, p)).toBe('deny');
    // Its metacharacters are literal: a HOME spelled with other characters is not this one.
    for (const other of [
      "/Users/o'neil (x) 1 {2} $a^b|c+d.e*f?g;h #i",
      "/Users/o'neil (x) [1] {2} $a^b|c+dXe*f?g;h #i",
      "/Users/o'neil (x) [1] {2} $a^b|c+d.eeef?g;h #i",
      "/Users/o'neil (x) [1] {2} $a^b|c+d.e*fg;h #i",
    ]) {
      expect(read(`${other}/.ssh/id_ed25519`, p), other).toBe('allow');
    }
  });

  it('R7.10: a path a #"…" regex cannot carry is refused, not written into the profile', () => {
    for (const bad of ['/Users/a"b', '/Users/x#"y', '/Users/a\\b', '/Users/a\nb', '/Users/a\rb']) {
      const error = refusal(() => seatbeltProfile([], seatbeltReads(shippedDenies(bad), [])));
      expect(error.code, JSON.stringify(bad)).toBe('SANDBOX_UNAVAILABLE');
      expect(error.message).toContain('Seatbelt');
    }
    const glob = refusal(() =>
      seatbeltProfile([], { denies: [deny('/opt/a"b/*.key')], readable: [] }),
    );
    expect(glob.code).toBe('SANDBOX_UNAVAILABLE');
  });

  it('R7.10: a literal path goes only into a -D value, whatever it holds', () => {
    const nasty = [
      '/opt/") (allow file-read* (subpath "/")) ("',
      '/opt/x#"y',
      '/opt/back\\slash',
      '/opt/new\nline',
      '/opt/semi;colon (paren',
    ];
    const p = seatbeltProfile(
      [],
      seatbeltReads(
        nasty.map((path) => deny(path)),
        [],
      ),
    );
    for (const path of nasty) {
      expect(p.text).not.toContain(path.slice('/opt/'.length));
      expect(p.parameters).toContain(`DENY_${String(nasty.indexOf(path))}=${path}`);
      expect(read(`${path}/file`, p), path).toBe('deny');
    }
    for (const line of p.text.split('\n').filter((l) => l !== '')) {
      expect(topLevelForms(line), line).toBe(1);
    }
  });

  it('R7.10: a regex longer than sandbox-exec accepts is refused', () => {
    const deep = `/opt/${'d'.repeat(1200)}/*`;
    expect(refusal(() => seatbeltProfile([], { denies: [deny(deep)], readable: [] })).code).toBe(
      'SANDBOX_UNAVAILABLE',
    );
  });

  it('R7.10: a deny of / and an excepted literal name deny nothing', () => {
    const p = seatbeltProfile([], {
      denies: [deny('/'), deny('/Users/a/.ssh/config', 'credentials', ['config'])],
      readable: [],
    });
    expect(p.text).not.toMatch(/\(deny file-read/);
    expect(read('/Users/a/.ssh/config', p)).toBe('allow');
  });
});

describe('seatbeltReads', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ahma-seatbelt-')));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('R7.10: /tmp, /var and /etc paths are denied as given and under /private', () => {
    const reads = seatbeltReads(
      [deny('/etc/shadow'), deny('/tmp/team/*.key'), deny('/var/db/secret')],
      ['/tmp/team/public.key'],
    );
    const paths = reads.denies.map((entry) => entry.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/etc/shadow',
        '/private/etc/shadow',
        '/tmp/team/*.key',
        '/private/tmp/team/*.key',
        '/var/db/secret',
        '/private/var/db/secret',
      ]),
    );
    expect(reads.readable).toEqual(
      expect.arrayContaining(['/tmp/team/public.key', '/private/tmp/team/public.key']),
    );
    const p = seatbeltProfile([], reads);
    expect(read('/private/tmp/team/prod.key', p)).toBe('deny');
    expect(read('/private/tmp/team/public.key', p)).toBe('allow');
    expect(read('/private/var/db/secret', p)).toBe('deny');
  });

  it('R7.10: links on the way are resolved, so the real path is denied too', () => {
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const reads = seatbeltReads(
      [deny(join(dir, 'link', 'secret')), deny(join(dir, 'link', '*.key'))],
      [join(dir, 'link', 'open.key')],
    );
    expect(reads.denies.map((entry) => entry.path)).toEqual(
      expect.arrayContaining([
        join(dir, 'link', 'secret'),
        join(dir, 'real', 'secret'),
        join(dir, 'link', '*.key'),
        join(dir, 'real', '*.key'),
      ]),
    );
    const p = seatbeltProfile([], reads);
    expect(read(join(dir, 'real', 'secret'), p)).toBe('deny');
    expect(read(join(dir, 'real', 'prod.key'), p)).toBe('deny');
    expect(read(join(dir, 'real', 'open.key'), p)).toBe('allow');
  });

  it('R7.10: each spelling is kept once', () => {
    const reads = seatbeltReads([deny('/opt/x'), deny('/opt/x')], ['/opt/x/y', '/opt/x/y']);
    expect(reads.denies.map((entry) => entry.path)).toEqual(['/opt/x']);
    expect(reads.readable).toEqual(['/opt/x/y']);
  });
});

describe('seatbeltArgv', () => {
  const hostile = [
    'sh',
    '-c',
    'echo "$HOME"; rm -rf ~ `id` $(whoami)',
    "it's",
    '") (allow file-write* (subpath "/"))',
    '2>&1',
    '',
    'line\nbreak',
    '*',
  ];
  const argv = seatbeltArgv(profile, hostile);

  it('R7.3: runs /usr/bin/sandbox-exec with the profile via -p', () => {
    expect(argv[0]).toBe(SANDBOX_EXEC);
    expect(SANDBOX_EXEC).toBe('/usr/bin/sandbox-exec');
    expect(argv[1]).toBe('-p');
    expect(argv[2]).toBe(profile.text);
  });

  it('R7.3: the profile contains no literal path of the scope', () => {
    const text = seatbeltProfile(writable).text;
    for (const path of writable) expect(text).not.toContain(path);
    expect(text).not.toContain('Users');
  });

  it('R7.3: passes -D WRITABLE_n=<path> per writable root, in order, then the read parameters', () => {
    expect(argv.slice(3, 3 + 2 * writable.length)).toEqual(
      writable.flatMap((path, index) => ['-D', `WRITABLE_${String(index)}=${path}`]),
    );
    expect(argv.slice(3, 3 + profile.parameters.length)).toEqual(profile.parameters);
    expect(profile.parameters.length).toBeGreaterThan(2 * writable.length);
  });

  it('R7.3: then /bin/sh -c \'exec "$@" 2>&1\' sh <argv…>, hostile words untouched', () => {
    const rest = argv.slice(3 + profile.parameters.length);
    expect(rest).toEqual(['/bin/sh', '-c', 'exec "$@" 2>&1', 'sh', ...hostile]);
    // Each word is its own element, identical to the input (not joined, quoted or escaped).
    expect(rest.slice(4)).toStrictEqual(hostile);
    expect(argv).toHaveLength(3 + profile.parameters.length + 4 + hostile.length);
  });

  it('R7.3: with no writable roots and no read rules there are no -D parameters', () => {
    const bare = seatbeltProfile([]);
    expect(seatbeltArgv(bare, ['true'])).toEqual([
      SANDBOX_EXEC,
      '-p',
      bare.text,
      '/bin/sh',
      '-c',
      'exec "$@" 2>&1',
      'sh',
      'true',
    ]);
  });
});
