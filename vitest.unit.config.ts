// `pnpm test:unit`, the edit loop: the unit files of every package (TestKinds in vitest.shared.ts)
// in one vitest run, without a build. The workspace packages are read from their sources, so an
// edit in core is seen by the packages that import it at once.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { tests as core } from './packages/core/vitest.config.js';
import { tests as generateSchema } from './packages/generate-schema/vitest.config.js';
import { tests as introspect } from './packages/introspect/vitest.config.js';
import { tests as listTools } from './packages/list-tools/vitest.config.js';
import { tests as remote } from './packages/remote/vitest.config.js';
import { tests as shellServer } from './packages/shell-server/vitest.config.js';
import { tests as validate } from './packages/validate/vitest.config.js';
import { unitProject, type TestKinds } from './vitest.shared.js';

/** Every package's test kinds, by its directory under packages/. */
const PACKAGES: Record<string, TestKinds> = {
  core,
  'generate-schema': generateSchema,
  introspect,
  'list-tools': listTools,
  remote,
  'shell-server': shellServer,
  validate,
};

const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));
// A package left out here would have its unit tests skipped without a word.
for (const entry of readdirSync(packagesDir, { withFileTypes: true })) {
  if (entry.isDirectory() && !(entry.name in PACKAGES)) {
    throw new Error(`vitest.unit.config.ts: add packages/${entry.name} to PACKAGES`);
  }
}

const source = (name: string) => `${packagesDir}${name}/src/index.ts`;

export default defineConfig({
  resolve: {
    alias: {
      '@ahma/core': source('core'),
      '@ahma/remote': source('remote'),
    },
  },
  test: {
    projects: Object.entries(PACKAGES).flatMap(([name, kinds]) => {
      const project = unitProject(kinds, { root: `${packagesDir}${name}`, name: `${name}/unit` });
      return project === undefined ? [] : [{ ...project, extends: true }];
    }),
  },
});
