// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: {
      globals: globals.node,
    },
    rules: {
      // stdout belongs to the MCP protocol; bins print through process.stdout/stderr explicitly.
      'no-console': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The operations page's script runs in the browser, as a classic script (no build step).
    files: ['packages/shell-server/ops-page/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
  },
);
