// R7.17: the egress proxy's host rules: what a pattern may be (and the message for what it may
// not), how a request's host is normalized (IDNA, case, trailing dot, IP literals in one form, an
// IPv4 address written any other way refused), and the decision: wildcards anchored on a label,
// ports (the defaults or the pattern's), deny winning over allow.
import { describe, expect, it } from 'vitest';
import { AhmaError } from '../../src/errors.js';
import {
  DEFAULT_PORTS,
  HostRules,
  hostPatternProblem,
  normalizeHost,
  parseHostPattern,
} from '../../src/network/host-rules.js';

describe('parseHostPattern', () => {
  it('R7.17: reads names, wildcards and IP addresses, each with an optional port, into canonical text', () => {
    expect(parseHostPattern('registry.npmjs.org')).toEqual({
      text: 'registry.npmjs.org',
      host: 'registry.npmjs.org',
      wildcard: false,
      ip: undefined,
      ports: [],
    });
    expect(parseHostPattern('*.Crates.IO')).toEqual({
      text: '*.crates.io',
      host: 'crates.io',
      wildcard: true,
      ip: undefined,
      ports: [],
    });
    expect(parseHostPattern('127.0.0.1:5432')).toMatchObject({
      text: '127.0.0.1:5432',
      host: '127.0.0.1',
      ip: 'ipv4',
      ports: [5432],
    });
    expect(parseHostPattern('[::1]:8080')).toMatchObject({
      text: '[::1]:8080',
      host: '::1',
      ip: 'ipv6',
      ports: [8080],
    });
    expect(parseHostPattern('0:0:0:0:0:0:0:1')).toMatchObject({ text: '[::1]', host: '::1' });
    expect(parseHostPattern('example.com.:8443')).toMatchObject({
      text: 'example.com:8443',
      ports: [8443],
    });
    expect(parseHostPattern('  bücher.example  ')).toMatchObject({
      text: 'xn--bcher-kva.example',
      host: 'xn--bcher-kva.example',
    });
    expect(DEFAULT_PORTS).toEqual([80, 443]);
  });

  it('R7.17: one canonical form for an IPv4-mapped address, however it is written', () => {
    const forms = [
      '[::ffff:127.0.0.1]:5432',
      '[::FFFF:7f00:1]:5432',
      '[0:0:0:0:0:ffff:7f00:0001]:5432',
    ];
    expect(new Set(forms.map((form) => parseHostPattern(form).text))).toEqual(
      new Set(['[::ffff:7f00:1]:5432']),
    );
  });

  it.each([
    ['', /empty/],
    ['*', /`\*` alone would allow every host/],
    ['*.', /needs a domain after it/],
    ['a*.com', /only as the whole first label/],
    ['foo.*.com', /only as the whole first label/],
    ['*.*.com', /only as the whole first label/],
    ['*.0.0.1', /not IP addresses/],
    ['*.[::1]', /not IP addresses/],
    ['a..com', /not a valid host name/],
    ['.a.com', /not a valid host name/],
    ['xn--zz.com', /not a valid host name/],
    ['a_b!.com', /not a valid host name/],
    ['example.com:0', /port "0" is not a number 1-65535/],
    ['example.com:65536', /port "65536"/],
    ['example.com:', /port ""/],
    ['example.com:http', /port "http"/],
    ['https://example.com', /without scheme, user, path/],
    ['example.com/path', /without scheme, user, path/],
    ['user@example.com', /without scheme, user, path/],
    ['exa mple.com', /without scheme, user, path/],
    ['127.1', /four decimal numbers/],
    ['2130706433', /four decimal numbers/],
    ['0x7f.0.0.1', /four decimal numbers/],
    ['0177.0.0.1', /four decimal numbers/],
    ['[127.0.0.1]', /not an IPv6 address/],
    ['[::1', /in brackets/],
    ['[fe80::1%eth0]', /not an IPv6 address/],
  ])('R7.17: refuses %j, saying what is accepted', (text, problem) => {
    let thrown: unknown;
    try {
      parseHostPattern(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AhmaError);
    expect((thrown as AhmaError).code).toBe('CONFIG_INVALID');
    expect((thrown as AhmaError).message).toMatch(problem);
    expect((thrown as AhmaError).message).toMatch(/a host pattern is a host name .*\*\.domain/);
    expect(hostPatternProblem(text)).toBe((thrown as AhmaError).message);
  });

  it('R7.17: hostPatternProblem is undefined for a pattern that parses', () => {
    expect(hostPatternProblem('*.github.com:22')).toBeUndefined();
  });
});

describe('normalizeHost', () => {
  it.each([
    ['Registry.NPMJS.org', 'registry.npmjs.org'],
    ['example.com.', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['BÜCHER.example.', 'xn--bcher-kva.example'],
    ['ａｂｃ.example', 'abc.example'],
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['[2001:DB8:0:0:0:0:0:1]', '2001:db8::1'],
    ['_service.example.com', '_service.example.com'],
  ])('R7.17: %j is %j', (host, normalized) => {
    expect(normalizeHost(host)).toBe(normalized);
  });

  it.each([
    [''],
    ['a b.com'],
    ['a\tb.com'],
    ['a..b'],
    ['.'],
    ['ex%41mple.com'],
    ['a/b'],
    ['xn--zz'],
    ['a／b.com'],
    ['[::1'],
    ['[127.0.0.1]'],
    ['fe80::1%eth0'],
    ['1.2.3.04'],
  ])('R7.17: %j is no host', (host) => {
    expect(normalizeHost(host)).toBeUndefined();
  });

  it.each([
    ['127.1'],
    ['2130706433'],
    ['0x7f.0.0.1'],
    ['0177.0.0.1'],
    ['１２７.０.０.１'],
    ['foo.0x10'],
    ['a.123'],
  ])(
    'R7.17: an IPv4 address written as %j is no host (getaddrinfo would reach an address no rule named)',
    (host) => {
      expect(normalizeHost(host)).toBeUndefined();
    },
  );
});

describe('HostRules.decide', () => {
  it('R7.17: a wildcard is anchored on a label: subdomains at any depth, not the domain, not a longer name', () => {
    const rules = new HostRules(['*.crates.io']);
    expect(rules.decide('static.crates.io', 443)).toMatchObject({ verdict: 'allow' });
    expect(rules.decide('a.b.crates.io', 443)).toMatchObject({ verdict: 'allow' });
    expect(rules.decide('crates.io', 443)).toEqual({
      verdict: 'unlisted',
      why: 'not on the allowlist',
    });
    expect(rules.decide('evilcrates.io', 443)).toMatchObject({ verdict: 'unlisted' });
    expect(rules.decide('crates.io.evil.com', 443)).toMatchObject({ verdict: 'unlisted' });
  });

  it('R7.17: an exact name matches only itself; Unicode rules match their punycode', () => {
    const rules = new HostRules(['registry.npmjs.org', 'bücher.example']);
    expect(rules.decide('registry.npmjs.org', 443)).toMatchObject({ verdict: 'allow' });
    expect(rules.decide('x.registry.npmjs.org', 443)).toMatchObject({ verdict: 'unlisted' });
    expect(rules.decide(normalizeHost('BÜCHER.example.') ?? '', 80)).toMatchObject({
      verdict: 'allow',
      rule: { text: 'xn--bcher-kva.example' },
    });
  });

  it('R7.17: without a port a pattern allows 80 and 443; with one, that port only; the refusal names the pattern and its ports', () => {
    const rules = new HostRules(['*.github.com', 'example.com:8443']);
    expect(rules.decide('api.github.com', 80)).toMatchObject({ verdict: 'allow' });
    expect(rules.decide('api.github.com', 443)).toMatchObject({ verdict: 'allow' });
    expect(rules.decide('api.github.com', 22)).toEqual({
      verdict: 'unlisted',
      why: 'port 22 is not allowed by *.github.com (80, 443)',
    });
    expect(rules.decide('example.com', 8443)).toMatchObject({ verdict: 'allow' });
    expect(rules.decide('example.com', 443)).toEqual({
      verdict: 'unlisted',
      why: 'port 443 is not allowed by example.com:8443 (8443)',
    });
  });

  it('R7.17: deny wins; a deny pattern without a port denies every port, one with a port only that port', () => {
    const rules = new HostRules(
      ['*.example.com', 'git.example.com:22'],
      ['secret.example.com', 'git.example.com:22'],
    );
    expect(rules.decide('secret.example.com', 443)).toMatchObject({
      verdict: 'deny',
      rule: { text: 'secret.example.com' },
    });
    expect(rules.decide('secret.example.com', 8080)).toMatchObject({ verdict: 'deny' });
    expect(rules.decide('git.example.com', 22)).toMatchObject({ verdict: 'deny' });
    expect(rules.decide('git.example.com', 443)).toMatchObject({ verdict: 'allow' });
  });

  it('R7.17: an IP pattern matches only the same address, in its canonical form; a wildcard never matches an address', () => {
    const rules = new HostRules(['127.0.0.1:5432', '[::ffff:127.0.0.1]:5433', '*.0-0-1.example']);
    expect(rules.decide('127.0.0.1', 5432)).toMatchObject({ verdict: 'allow' });
    expect(rules.decide('127.0.0.2', 5432)).toMatchObject({ verdict: 'unlisted' });
    expect(rules.decide(normalizeHost('[::FFFF:7F00:1]') ?? '', 5433)).toMatchObject({
      verdict: 'allow',
    });
    expect(rules.decide('::ffff:7f00:1', 5432)).toMatchObject({ verdict: 'unlisted' });
  });

  it('R7.17: with() adds rules (a grant) and leaves the set it was made from as it was', () => {
    const base = new HostRules(['a.example'], ['b.example']);
    const granted = base.with(['c.example:8080']);
    expect(granted.decide('c.example', 8080)).toMatchObject({ verdict: 'allow' });
    expect(granted.decide('b.example', 443)).toMatchObject({ verdict: 'deny' });
    expect(base.decide('c.example', 8080)).toMatchObject({ verdict: 'unlisted' });
    expect(granted.with([], ['c.example']).decide('c.example', 8080)).toMatchObject({
      verdict: 'deny',
    });
    expect(() => new HostRules(['*'])).toThrow(AhmaError);
    expect(new HostRules([parseHostPattern('x.example')]).allow.map((rule) => rule.text)).toEqual([
      'x.example',
    ]);
  });
});
