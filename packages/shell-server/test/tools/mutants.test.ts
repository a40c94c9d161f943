// SPEC §2 "a valid file can never make tools/call answer a JSON-RPC error", as a property test:
// single-key mutations of real tool files (a key deleted, a value's type changed, format "path"
// added, items dropped, …); every mutant that passes the validator is served by the server
// (in this process, over InMemoryTransport) and each of its tools is called with a minimal valid call. The answer must be a tool result
// (isError allowed), never a protocol error. A fixed seed keeps the sample reproducible.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DocumentChecker } from '@ahma/core';
import { afterEach, describe, expect, it } from 'vitest';
import { minimalArgs } from '../../../core/test/definition/minimal-args.js';
import { E2E, FIXTURES, PACKAGE_DIR } from '../support/harness.js';

const CORE_FIXTURES = join(PACKAGE_DIR, '..', 'core', 'test', 'fixtures');
const SOURCES = [
  join(CORE_FIXTURES, 'upstream-ahma', 'file-tools.json'),
  join(CORE_FIXTURES, 'upstream-ahma', 'git.json'),
  join(CORE_FIXTURES, 'valid', 'date.json'),
  join(FIXTURES, 'tools', 'zz-argv.json'),
  join(FIXTURES, 'tools', 'files.json'),
];
const SEED = 0x5eed;
const SAMPLE = 60;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every single-key mutation of `document`, each a fresh copy. */
function mutations(document: Json): Json[] {
  const found: Json[] = [];
  const visit = (node: Json, path: (string | number)[]) => {
    if (node === null || typeof node !== 'object') return;
    const entries: [string | number, Json][] = Array.isArray(node)
      ? node.map((value, index) => [index, value])
      : Object.entries(node);
    for (const [key, value] of entries) {
      const here = [...path, key];
      if (!Array.isArray(node)) found.push(edit(document, here, undefined));
      found.push(edit(document, here, otherType(value)));
      visit(value, here);
    }
    if (!Array.isArray(node) && typeof node['type'] === 'string') {
      found.push(edit(document, [...path, 'format'], 'path'));
      found.push(edit(document, [...path, 'items'], undefined));
      found.push(edit(document, [...path, 'type'], 'array'));
      found.push(edit(document, [...path, 'name'], 'working_directory'));
    }
  };
  visit(document, []);
  return found;
}

function otherType(value: Json): Json {
  if (typeof value === 'string') return 1;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return {};
  if (value === null) return 0;
  return [];
}

/** A copy of `document` with the value at `path` set (undefined deletes it). */
function edit(document: Json, path: (string | number)[], value: Json | undefined): Json {
  const copy = structuredClone(document);
  let node = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  const last = path.at(-1) as string | number;
  if (value === undefined) Reflect.deleteProperty(node, last);
  else node[last] = value;
  return copy;
}

/** mulberry32: a small deterministic PRNG, so a failure can be reproduced. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const e2e = new E2E();
afterEach(() => e2e.cleanup());

describe('SPEC §2: no valid file makes tools/call answer a protocol error', () => {
  it(`SPEC §2, R5.1: valid single-key mutants of real tool files never yield a JSON-RPC error (seed ${String(SEED)})`, async () => {
    const checker = new DocumentChecker();
    const all = SOURCES.flatMap((file) =>
      mutations(JSON.parse(readFileSync(file, 'utf8')) as Json),
    );
    const next = random(SEED);
    const valid: Json[] = [];
    // Fisher–Yates with the seeded generator.
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [all[i], all[j]] = [all[j] as Json, all[i] as Json];
    }
    for (const mutant of all) {
      if (valid.length >= SAMPLE) break;
      if (mutant === null || typeof mutant !== 'object' || Array.isArray(mutant)) continue;
      // A fresh name per mutant, so they can be served together.
      const named = { ...mutant, name: `m${String(valid.length)}` };
      if (checker.checkDefinition('m.json', JSON.stringify(named)).ok) valid.push(named);
    }
    expect(valid.length).toBeGreaterThan(SAMPLE / 2);

    const scope = await e2e.scope({ noTools: true });
    for (const [index, mutant] of valid.entries()) {
      await writeFile(
        join(scope.dir, '.ahma', 'tools', `m${String(index)}.json`),
        JSON.stringify(mutant),
      );
    }
    for (const name of ['a', 'notes.txt']) await writeFile(join(scope.dir, name), 'a\n');
    const server = await e2e.inProcess(scope, ['--sync', '--timeout', '20']);
    const tools = (await server.client.listTools()).tools.filter((tool) => /^m\d+/.test(tool.name));
    expect(tools.length).toBeGreaterThan(SAMPLE);

    const protocolErrors: string[] = [];
    // Four at a time: enough to be quick on two shared cores, few enough to stay well-behaved.
    for (let start = 0; start < tools.length; start += 4) {
      await Promise.all(
        tools.slice(start, start + 4).map(async (tool) => {
          const args = minimalArgs(tool.inputSchema as Parameters<typeof minimalArgs>[0]);
          try {
            const result = await server.call(tool.name, args);
            expect(Array.isArray(result.content)).toBe(true);
          } catch (error) {
            protocolErrors.push(`${tool.name} ${JSON.stringify(args)}: ${String(error)}`);
          }
        }),
      );
    }
    expect(protocolErrors).toEqual([]);
  }, 120_000);
});
