#!/usr/bin/env node
// Lint: every published package (packages/*, not private) is right for the npm registry, and they
// share one version. What a registry user needs: a name under @ahma, the version of the others (the
// changesets `fixed` group keeps them together), a description, the license, where the code lives
// (repository with its directory), the Node it needs, what is shipped (`files`, `exports` naming
// files the build makes), a README and a CHANGELOG beside it, public access, workspace
// dependencies as `workspace:*` (pnpm publish writes the version in), and bins that are shipped.
// Prints every problem as `packages/NAME/package.json: problem`; exit 1 when there is any.
//
//   node scripts/check-packages.mjs
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const problems = [];

const manifests = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, json: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ json }) => json.private !== true);

const versions = new Set(manifests.map(({ json }) => json.version));
if (versions.size !== 1) {
  problems.push(`package versions differ (${[...versions].join(', ')}): they are one fixed group`);
}

/** Whether `path` (relative to the package) is shipped: inside one of the `files` entries. */
const shipped = (files, path) => {
  const normal = path.replace(/^\.\//, '');
  return files.some((entry) => normal === entry || normal.startsWith(`${entry}/`));
};

for (const { dir, json } of manifests) {
  const where = relative(root, join(dir, 'package.json'));
  const say = (problem) => problems.push(`${where}: ${problem}`);
  const folder = relative(root, dir);
  if (!/^@ahma\/[a-z-]+$/.test(json.name ?? '')) say(`name ${json.name} is not @ahma/…`);
  for (const field of ['description', 'license', 'author', 'homepage']) {
    if (typeof json[field] !== 'string' || json[field] === '') say(`no ${field}`);
  }
  if (json.license !== rootManifest.license) say(`license is not ${rootManifest.license}`);
  if (json.engines?.node !== rootManifest.engines.node) {
    say(`engines.node is not ${rootManifest.engines.node}`);
  }
  if (json.type !== 'module') say('type is not module');
  if (json.repository?.type !== 'git' || json.repository?.directory !== folder) {
    say(`repository is not { type: git, url, directory: ${folder} }`);
  }
  if (json.publishConfig?.access !== 'public') say('publishConfig.access is not public');
  if (json.scripts?.prepack !== 'node ../../scripts/prepack.mjs') {
    say('scripts.prepack does not run scripts/prepack.mjs (the license and the helpers)');
  }
  const files = json.files ?? [];
  if (!files.includes('dist')) say('files does not ship dist');
  for (const doc of ['README.md', 'CHANGELOG.md']) {
    if (!existsSync(join(dir, doc))) say(`no ${doc}`);
  }
  if (!files.includes('CHANGELOG.md')) say('files does not ship CHANGELOG.md');
  const entry = json.exports?.['.'];
  if (entry?.import !== './dist/index.js' || entry?.types !== './dist/index.d.ts') {
    say('exports["."] is not { types: ./dist/index.d.ts, import: ./dist/index.js }');
  }
  for (const [bin, path] of Object.entries(json.bin ?? {})) {
    if (!shipped(files, path)) say(`bin ${bin} (${path}) is not in files`);
    else if (!existsSync(join(dir, path))) say(`bin ${bin}: ${path} does not exist`);
  }
  for (const path of json.publishConfig?.executableFiles ?? []) {
    if (!shipped(files, path)) say(`executable file ${path} is not in files`);
  }
  for (const kind of ['dependencies', 'devDependencies']) {
    for (const [name, range] of Object.entries(json[kind] ?? {})) {
      if (name.startsWith('@ahma/') && range !== 'workspace:*') {
        say(`${kind}.${name} is ${range}, not workspace:*`);
      }
    }
  }
}

for (const problem of problems) process.stderr.write(`${problem}\n`);
process.exit(problems.length === 0 ? 0 : 1);
