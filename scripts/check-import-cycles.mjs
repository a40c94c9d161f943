#!/usr/bin/env node
// Lint: no import cycle inside any package's src/, type-only imports included (a cycle of types
// still ties two modules' designs together). Every relative `import`/`export … from` of a .ts file
// is an edge; each strongly connected component with more than one module (or a module importing
// itself) is reported with the path around it. Exit 1 when there is any.
//
//   node scripts/check-import-cycles.mjs [ROOT]   (ROOT: a tree with packages/*/src; default: this repository)
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importsOf, sources } from './lib/imports.mjs';

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const packages = join(root, 'packages');

/** Tarjan's strongly connected components of the graph. */
function components(graph) {
  let index = 0;
  const indices = new Map();
  const lows = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    indices.set(node, index);
    lows.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indices.has(next)) {
        visit(next);
        lows.set(node, Math.min(lows.get(node), lows.get(next)));
      } else if (onStack.has(next)) {
        lows.set(node, Math.min(lows.get(node), indices.get(next)));
      }
    }
    if (lows.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      found.push(component);
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

/** One cycle through the component, as a readable path back to its start. */
function cycleIn(component, graph) {
  const members = new Set(component);
  const start = component[0];
  const path = [start];
  const seen = new Set([start]);
  for (;;) {
    const here = path.at(-1);
    const next = graph.get(here).find((n) => n === start || (members.has(n) && !seen.has(n)));
    if (next === undefined || next === start) return [...path, start];
    path.push(next);
    seen.add(next);
  }
}

let problems = 0;
for (const name of readdirSync(packages)) {
  const src = join(packages, name, 'src');
  let files;
  try {
    files = sources(src);
  } catch {
    continue;
  }
  const graph = new Map(files.map((file) => [file, importsOf(file).files]));
  for (const component of components(graph)) {
    const selfImport = component.length === 1 && graph.get(component[0]).includes(component[0]);
    if (component.length < 2 && !selfImport) continue;
    problems++;
    const path = cycleIn(component, graph).map((file) => relative(root, file));
    process.stderr.write(`import cycle: ${path.join(' → ')}\n`);
  }
}
if (problems > 0) {
  process.stderr.write(
    `${String(problems)} import cycle(s): move the shared types below both modules\n`,
  );
  process.exit(1);
}
process.stdout.write('no import cycles\n');
