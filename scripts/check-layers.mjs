#!/usr/bin/env node
// Lint: every package with a `src/layers.json` keeps the dependency rule that file writes down.
// Each file of src/ belongs to the longest declared folder that contains it (or is one of the root
// files); a relative import must stay in its folder, name a folder the importer's entry lists, or
// name a shared root file; the MCP SDK is imported only where `sdk` is true. The declared graph
// itself must be acyclic and at most MAX_LEVELS deep. Exit 1 on any breach.
//
//   node scripts/check-layers.mjs [ROOT]   (ROOT: a tree with packages/*/src; default: this repository)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importsOf, sources } from './lib/imports.mjs';

/** A newcomer follows a call through at most this many folders, entry to leaf. */
const MAX_LEVELS = 6;
const SDK = /^@modelcontextprotocol\//;

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const packages = join(root, 'packages');
const problems = [];

/** The declared folder `file` belongs to: the longest one containing it; undefined at the root. */
function folderOf(src, folders, file) {
  const path = relative(src, file).split(sep).join('/');
  return folders
    .filter((folder) => path.startsWith(`${folder}/`))
    .sort((a, b) => b.length - a.length)[0];
}

/** How many folders the longest import chain from `folder` passes through (a cycle: Infinity). */
function depth(folder, layers, visiting = new Set()) {
  if (visiting.has(folder)) return Infinity;
  visiting.add(folder);
  const below = layers.folders[folder].imports.map((next) => depth(next, layers, visiting));
  visiting.delete(folder);
  return 1 + Math.max(0, ...below);
}

function checkPackage(name) {
  const src = join(packages, name, 'src');
  const layersFile = join(src, 'layers.json');
  if (!existsSync(layersFile)) return;
  const layers = JSON.parse(readFileSync(layersFile, 'utf8'));
  const folders = Object.keys(layers.folders);
  const rootFiles = [layers.root.entry, ...layers.root.shared];
  const at = (file) => `${name}/src/${relative(src, file)}`;

  for (const folder of folders) {
    for (const next of layers.folders[folder].imports) {
      if (!(next in layers.folders))
        problems.push(`${name}: ${folder} lists unknown folder ${next}`);
    }
    if (!existsSync(join(src, folder)))
      problems.push(`${name}: declared folder ${folder} is missing`);
  }
  if (problems.length > 0) return;
  for (const folder of folders) {
    const levels = depth(folder, layers);
    if (levels > MAX_LEVELS) {
      problems.push(
        `${name}: ${folder} is ${String(levels)} levels deep (at most ${String(MAX_LEVELS)}, or a cycle)`,
      );
    }
  }

  for (const file of sources(src)) {
    const from = folderOf(src, folders, file);
    const isRoot = from === undefined;
    if (isRoot && !rootFiles.includes(relative(src, file))) {
      problems.push(`${at(file)} is in no folder of layers.json`);
      continue;
    }
    const { files, packages: imported } = importsOf(file);
    for (const target of files) {
      const to = folderOf(src, folders, target);
      if (to === undefined) {
        const rootFile = relative(src, target);
        if (!layers.root.shared.includes(rootFile) && !isRoot) {
          problems.push(`${at(file)} imports ${rootFile}, which only the entry may`);
        }
        continue;
      }
      if (isRoot || to === from || layers.folders[from].imports.includes(to)) continue;
      problems.push(
        `${at(file)} (${from}) imports ${relative(src, target)} (${to}): not in ${from}'s imports`,
      );
    }
    if (!isRoot && !layers.folders[from].sdk) {
      for (const specifier of imported.filter((s) => SDK.test(s))) {
        problems.push(
          `${at(file)} (${from}) imports the MCP SDK (${specifier}): ${from} has "sdk": false`,
        );
      }
    }
  }
}

for (const name of readdirSync(packages)) checkPackage(name);
if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.stderr.write(`${String(problems.length)} breach(es) of src/layers.json\n`);
  process.exit(1);
}
process.stdout.write("every import keeps its package's layers\n");
