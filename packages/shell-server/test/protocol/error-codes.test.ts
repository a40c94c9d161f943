// A refused call keeps its error code on the way to the agent (docs/requirements.md, "Error
// codes"): the text starts with [CODE] and structuredContent is {error: {code, message}}, which
// every tool's outputSchema declares, so the real SDK Client (it validates structuredContent
// against outputSchema even for isError results) accepts it.
import { AHMA_ERROR_CODES } from '@ahma/core';
import { describe, expect } from 'vitest';
import { it, structured, textOf, type Operations } from '../support/harness.js';

interface ErrorContent {
  readonly error: { readonly code: string; readonly message: string };
}

describe.concurrent('error codes reach the agent', { timeout: 60_000 }, () => {
  it('R7.1: a path outside the scope is refused with PATH_OUTSIDE_SCOPE in the text and in structuredContent', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const result = await server.call('files_show', { path: '/etc/passwd' });
    expect(result.isError).toBe(true);
    const { error } = structured<ErrorContent>(result);
    expect(error.code).toBe('PATH_OUTSIDE_SCOPE');
    expect(error.message).toMatch(/argument "path": .* is outside the sandbox scope/);
    expect(textOf(result)).toBe(`[PATH_OUTSIDE_SCOPE] ${error.message}`);
    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('R10.3: a working_directory outside the scope on a built-in tool carries PATH_OUTSIDE_SCOPE too', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const result = await server.call('sandboxed_shell', {
      command: 'true',
      working_directory: '/',
    });
    expect(result.isError).toBe(true);
    expect(structured<ErrorContent>(result).error.code).toBe('PATH_OUTSIDE_SCOPE');
  });

  it('SPEC §3: bad arguments carry ARGUMENTS_INVALID and an unknown operation OPERATION_UNKNOWN', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const bad = await server.call('sandboxed_shell', {});
    expect(structured<ErrorContent>(bad).error.code).toBe('ARGUMENTS_INVALID');
    expect(textOf(bad)).toMatch(/^\[ARGUMENTS_INVALID\] Invalid arguments for sandboxed_shell:/);
    const unknown = await server.call('cancel', { id: 'op_none_1' });
    expect(unknown.isError).toBe(true);
    expect(structured<ErrorContent>(unknown).error.code).toBe('OPERATION_UNKNOWN');
  });

  it('SPEC §3: every tool declares the error shape with every code in its outputSchema', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const { tools } = await server.client.listTools();
    expect(tools.length).toBeGreaterThan(5);
    for (const tool of tools) {
      const error = (tool.outputSchema?.properties as Record<string, unknown> | undefined)?.[
        'error'
      ];
      expect(error, tool.name).toMatchObject({
        properties: { code: { enum: [...AHMA_ERROR_CODES] } },
        required: ['code', 'message'],
      });
    }
  });
});
