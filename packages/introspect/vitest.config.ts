// Which test files are which kind (TestKinds in vitest.shared.ts): the folder under test/ says it.
// test/system (and any file not listed here) is `system`.
import { testConfig, type TestKinds } from '../../vitest.shared.js';

export const tests: TestKinds = {
  unit: ['test/unit/**/*.test.ts'],
  e2e: ['test/e2e/**/*.test.ts'],
};

export default testConfig(tests);
