// Re-running over a file the person edited: a three-way merge of what was discovered last time
// (the base, kept beside the file), the file as it is now (theirs: the person's), and what was
// discovered now. What the person did not touch follows the program; what they changed, added or
// deleted stays as they left it. Subcommands and arguments are matched by name.
import { isDeepStrictEqual } from 'node:util';

type Json = unknown;
type JsonObject = Record<string, Json>;

/** The lists whose items are matched by `name`. */
const NAMED_LISTS = new Set(['subcommand', 'options', 'positional_args']);

export interface MergeReport {
  /** Subcommands and arguments the program has now that it had not (`git › commit › --fixup`). */
  readonly added: string[];
  /** Those it no longer has, removed from the file. */
  readonly removed: string[];
  /** Those it no longer has but the person had changed: kept. */
  readonly keptEdited: string[];
}

export interface Merged {
  readonly definition: JsonObject;
  readonly report: MergeReport;
}

/** `edited` brought up to `discovered`, keeping every change the person made to `base`. */
export function mergeDiscovered(
  base: JsonObject,
  edited: JsonObject,
  discovered: JsonObject,
): Merged {
  const report: MergeReport = { added: [], removed: [], keptEdited: [] };
  const definition = mergeObject(base, edited, discovered, [], report);
  return { definition, report };
}

function mergeObject(
  base: JsonObject,
  edited: JsonObject,
  discovered: JsonObject,
  where: readonly string[],
  report: MergeReport,
): JsonObject {
  const result: JsonObject = {};
  const keys = [...new Set([...Object.keys(discovered), ...Object.keys(edited)])];
  for (const key of keys) {
    const [was, is, now] = [base[key], edited[key], discovered[key]];
    if (NAMED_LISTS.has(key) && isNamedList(is ?? []) && isNamedList(now ?? [])) {
      const list = mergeNamed(
        isNamedList(was) ? was : [],
        isNamedList(is) ? is : [],
        isNamedList(now) ? now : [],
        key,
        where,
        report,
      );
      if (list.length > 0 || (is !== undefined && now !== undefined)) result[key] = list;
      continue;
    }
    // Untouched since the last run: follow the program (absent now, gone). Else: the person's.
    const value = isDeepStrictEqual(is, was) ? now : is;
    if (value !== undefined) result[key] = value;
  }
  return result;
}

function mergeNamed(
  base: readonly JsonObject[],
  edited: readonly JsonObject[],
  discovered: readonly JsonObject[],
  list: string,
  where: readonly string[],
  report: MergeReport,
): JsonObject[] {
  const byName = (items: readonly JsonObject[]) =>
    new Map(items.map((item) => [String(item['name']), item]));
  const [was, is, now] = [byName(base), byName(edited), byName(discovered)];
  const label = (name: string) =>
    [...where, list === 'subcommand' ? name : list === 'options' ? `--${name}` : `<${name}>`].join(
      ' › ',
    );
  const result: JsonObject[] = [];
  for (const [name, item] of now) {
    const before = was.get(name);
    const mine = is.get(name);
    if (before === undefined) {
      // New in the program; unless the person wrote one of that name, which wins.
      if (mine === undefined) report.added.push(label(name));
      result.push(mine ?? item);
    } else if (mine !== undefined) {
      result.push(
        list === 'subcommand'
          ? mergeObject(before, mine, item, [...where, name], report)
          : isDeepStrictEqual(mine, before)
            ? item
            : mine,
      );
    }
    // In the base and the program but not in the file: the person deleted it, and it stays so.
  }
  for (const [name, mine] of is) {
    if (now.has(name)) continue;
    const before = was.get(name);
    if (before === undefined) {
      result.push(mine); // the person's own
    } else if (isDeepStrictEqual(mine, before)) {
      report.removed.push(label(name));
    } else {
      report.keptEdited.push(label(name));
      result.push(mine);
    }
  }
  return result;
}

function isNamedList(value: Json): value is JsonObject[] {
  return (
    Array.isArray(value) &&
    value.every((item) => typeof item === 'object' && item !== null && 'name' in item)
  );
}
