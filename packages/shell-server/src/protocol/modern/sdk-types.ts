// The seams between the SDK v1's types, in which the tools and their results are written, and the
// SDK v2's, which the 2026-07-28 server answers in. Both describe the same JSON, and most of it
// the v2 types accept as it is (a CallToolResult does); two places they cannot, each converted
// here, once, with the reason:
// - a tool descriptor: v1 types a schema's `properties` as objects, v2 as JSON values, which a
//   descriptor is (read from a JSON file, or a literal of the built-ins) but no type can show;
// - a task answering tools/call (SEP-2663): the v2 types know only results with content; the SDK
//   passes the task result through as it is.
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Tool as LegacyTool } from '@modelcontextprotocol/sdk/types.js';
import type { CreateTaskResult } from './task-extension.js';

/** A tool descriptor as the SDK v2 types it: the same JSON. */
export function asModernTool(tool: LegacyTool): Tool {
  return tool as Tool;
}

/** An opted-in call's task as what tools/call answers (SEP-2663 extends its result). */
export function taskAsToolResult(task: CreateTaskResult): CallToolResult {
  return task as CreateTaskResult & CallToolResult;
}
