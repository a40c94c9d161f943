// docs/requirements.md resolves every requirement id and SPEC section the repository cites: the
// sources, tests, native code, scripts, bench and docs are scanned for ids (R7.2, R8D.3, FR4.1,
// NFR4.3, EC5, ranges like R6.1–R6.3) and sections (SPEC §3, §2 availability); each must have a
// row. Every path the document links must exist, and every AhmaError code has its one line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AHMA_ERROR_CODES } from '../../src/errors.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const DOC = join(REPO_ROOT, 'docs', 'requirements.md');

/** Where ids are cited: every package, bench, scripts, docs and the README. */
const ROOTS = ['packages', 'bench', 'scripts', 'docs', 'README.md'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'build', '.turbo', 'coverage']);
const TEXT_FILE = /\.(?:[cm]?[jt]s|c|h|md|json|ya?ml|sh)$/;
const GENERATED = new Set(['test-results.json']);
/** This file: its examples of ids are test data, not citations. */
const SELF = fileURLToPath(import.meta.url);

/**
 * A requirement id: R, FR, NFR or EC, a number, an optional letter A–D (R8A, R8D.3) and an
 * optional `.number`. Not inside a word or a dotted version (R2D2, v1.R2, SHA1R2), and not followed
 * by a letter, a digit or a further `.number` (R7.2.1).
 */
const ID = String.raw`(?:NFR|FR|EC|R)\d+(?:[A-D])?(?:\.\d+)?`;
const BEFORE = String.raw`(?<![\w.])(?<!(?<!\d)/)`; // "R2.4/R3.5" cites R3.5; "/tmp/R1.json" nothing
const AFTER = String.raw`(?![\w]|\.\d)`;
const ID_PATTERN = new RegExp(`${BEFORE}(${ID})${AFTER}`, 'g');
const RANGE_PATTERN = new RegExp(String.raw`${BEFORE}(${ID})\s*[–-]\s*(${ID})${AFTER}`, 'g');
const SECTION_PATTERN = /§\s*(\d+)/g;

interface Citation {
  readonly id: string;
  readonly file: string;
}

function* textFiles(path: string): Generator<string> {
  if (!existsSync(path)) return;
  const entries = readdirSync(path, { withFileTypes: true });
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* textFiles(child);
    } else if (
      entry.isFile() &&
      TEXT_FILE.test(entry.name) &&
      !GENERATED.has(entry.name) &&
      child !== SELF
    ) {
      yield child;
    }
  }
}

function sourceFiles(): string[] {
  return ROOTS.flatMap((root) => {
    const path = join(REPO_ROOT, root);
    return root.includes('.') ? (existsSync(path) ? [path] : []) : [...textFiles(path)];
  });
}

/** `R10.3–R10.5` also cites R10.4: the ids between two of the same group. */
function expandRange(from: string, to: string): string[] {
  const a = /^([A-Z]+\d+[A-D]?)\.(\d+)$/.exec(from);
  const b = /^([A-Z]+\d+[A-D]?)\.(\d+)$/.exec(to);
  if (a?.[1] === undefined || b?.[1] === undefined || a[1] !== b[1]) return [];
  const ids: string[] = [];
  for (let n = Number(a[2]) + 1; n < Number(b[2]); n++) ids.push(`${a[1]}.${String(n)}`);
  return ids;
}

/** Every id and section a text cites. Sections come out as `SPEC §N`. */
function citedIds(text: string): string[] {
  const ids = new Set<string>();
  for (const match of text.matchAll(ID_PATTERN)) ids.add(match[1] ?? '');
  for (const match of text.matchAll(RANGE_PATTERN)) {
    for (const id of expandRange(match[1] ?? '', match[2] ?? '')) ids.add(id);
  }
  for (const match of text.matchAll(SECTION_PATTERN)) ids.add(`SPEC §${match[1] ?? ''}`);
  return [...ids];
}

/** The ids and sections the document has a row for (the first cell of a table row). */
function documentedIds(document: string): Set<string> {
  const ids = new Set<string>();
  for (const line of document.split('\n')) {
    const cell = /^\|\s*([^|]+?)\s*\|/.exec(line)?.[1];
    if (cell !== undefined && (/^SPEC §\d+$/.test(cell) || new RegExp(`^${ID}$`).test(cell))) {
      ids.add(cell);
    }
  }
  return ids;
}

function citations(): Citation[] {
  return sourceFiles().flatMap((file) =>
    citedIds(readFileSync(file, 'utf8')).map((id) => ({ id, file: relative(REPO_ROOT, file) })),
  );
}

/** "R7.2 (cited in packages/…/x.ts, …)" for each cited id the document lacks. */
function missing(document: string, cited: readonly Citation[]): string[] {
  const documented = documentedIds(document);
  const byId = new Map<string, string[]>();
  for (const { id, file } of cited) {
    if (!documented.has(id)) byId.set(id, [...(byId.get(id) ?? []), file]);
  }
  return [...byId].map(([id, files]) => `${id} (cited in ${files.join(', ')})`);
}

const document = readFileSync(DOC, 'utf8');

describe('docs/requirements.md', () => {
  it('the id pattern finds ids and ranges and ignores what only looks like one', () => {
    expect(
      citedIds(
        "it('R7.2: …') R8D.3, R8A; FR4.1 NFR4.3 EC5 R2.4/R3.5 (R6.1–R6.3) SPEC §3 and §2 availability",
      ).sort(),
    ).toEqual(
      [
        'R7.2',
        'R8D.3',
        'R8A',
        'FR4.1',
        'NFR4.3',
        'EC5',
        'R2.4',
        'R3.5',
        'R6.1',
        'R6.2',
        'R6.3',
        'SPEC §3',
        'SPEC §2',
      ].sort(),
    );
    expect(citedIds('R2D2 0xR12 v1.R2 SHA1R2 R7.2.1 RR1 R1x PR12 R8E e5b0R3 /tmp/R1.json')).toEqual(
      [],
    );
  });

  it('has a row for every requirement id and SPEC section cited in the repository', () => {
    const cited = citations();
    expect(cited.length).toBeGreaterThan(300);
    expect(missing(document, cited)).toEqual([]);
  });

  it('a row taken away is reported with the files that cite its id', () => {
    const cited = citations();
    const withoutRow = document
      .split('\n')
      .filter((line) => !/^\|\s*R7\.3\s*\|/.test(line))
      .join('\n');
    const report = missing(withoutRow, cited);
    expect(report).toHaveLength(1);
    expect(report[0]).toMatch(/^R7\.3 \(cited in .*packages\/core\/src\/sandbox\/seatbelt\.ts/);
  });

  it('every path it links exists', () => {
    const links = [...document.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((match) => match[1] ?? '')
      .filter((target) => !/^[a-z]+:/.test(target));
    expect(links.length).toBeGreaterThan(100);
    const broken = links.filter((target) => !existsSync(resolve(dirname(DOC), target)));
    expect(broken).toEqual([]);
  });

  it('SPEC §3: every AhmaError code has its one line under "Error codes", and no other code does', () => {
    const section = document.slice(document.indexOf('## Error codes'));
    const rows = [...section.matchAll(/^\|\s*`([A-Z_]+)`\s*\|.*\S.*\|$/gm)].map(
      (match) => match[1],
    );
    expect(rows.sort()).toEqual([...AHMA_ERROR_CODES].sort());
  });
});
