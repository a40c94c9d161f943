// find's help lists its expression primaries several to a line — `-maxdepth LEVELS -mindepth
// LEVELS`, `-perm [-/]MODE`, `-exec COMMAND ;` — with one dash before a whole word. They are read
// here as options named by `long` (the model has no single-dash long form: see the report).
import type { HelpOption } from '../model.js';
import { makeValue } from './text-values.js';

/** Sections whose lines are primaries; `Operators` are syntax, not options. */
const PRIMARY_SECTIONS = /^(?:positional options|normal options|tests|actions)\b/i;
const HEADING = /^(\S[^:]*):\s*$/;

export function isFindHelp(text: string): boolean {
  return /^Expression may consist of/m.test(text);
}

/** The primaries listed under find's option, test and action headings. */
export function readFindPrimaries(lines: readonly string[]): HelpOption[] {
  const options = new Map<string, HelpOption>();
  let inPrimaries = false;
  for (const line of lines) {
    const heading = HEADING.exec(line.replace(/\s*\([^)]*\)\s*/g, ''));
    if (heading !== null && !line.startsWith(' ')) {
      inPrimaries = PRIMARY_SECTIONS.test(heading[1] ?? '');
      continue;
    }
    if (!inPrimaries || !line.startsWith(' ')) continue;
    const tokens = line.trim().split(/\s+/);
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i] ?? '';
      const name = /^-([a-z][\w-]+)$/.exec(token)?.[1];
      if (name === undefined) continue;
      // The value words that follow, up to the next primary: `FILE FORMAT`, `COMMAND ;`.
      const values: string[] = [];
      while (i + 1 < tokens.length && !/^-[a-z]/.test(tokens[i + 1] ?? '')) {
        const next = tokens[i + 1] ?? '';
        if (next === ';' || next === '{}' || next === '+') {
          i++;
          continue;
        }
        values.push(next);
        i++;
      }
      if (options.has(name)) continue;
      const raw = values.join(' ');
      options.set(name, {
        long: name,
        singleDash: true,
        ...(raw === '' ? {} : { value: makeValue(raw, false) }),
      });
    }
  }
  return [...options.values()];
}

/** The glued `-Olevel` of find's usage: `-O` taking an integer (the optimisation level). */
export function findGluedOptions(usage: string): HelpOption[] {
  const options: HelpOption[] = [];
  for (const match of usage.matchAll(/\[-([A-Z])([a-z]+)\]/g)) {
    const [, short, name] = match;
    if (short !== undefined && name !== undefined) {
      options.push({ short, value: { ...makeValue(name, false), type: 'integer' } });
    }
  }
  return options;
}
