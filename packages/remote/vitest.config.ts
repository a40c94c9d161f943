// Which test files are which kind (TestKinds in vitest.shared.ts): every file here starts real
// servers (an authorization server, an MCP server), so all are `system`, the default.
import { testConfig, type TestKinds } from '../../vitest.shared.js';

export const tests: TestKinds = {};

export default testConfig(tests);
