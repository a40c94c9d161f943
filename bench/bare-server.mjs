#!/usr/bin/env node
// The bare MCP server a cold start is compared with (issue 31: "cold start ≤ 1.5× the bare SDK
// server's"): the SDK v1's Server over stdio with one tool and nothing else, what any Node MCP
// server pays before it does anything of its own.
//
//   node bench/cold-start.mjs OTHER_CHECKOUT --bare
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: 'echo',
      description: 'Echoes its text.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: 'text', text: String(request.params.arguments?.['text'] ?? '') }],
}));
await server.connect(new StdioServerTransport());
