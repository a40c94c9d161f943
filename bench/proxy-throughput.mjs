#!/usr/bin/env node
// R7.16: the egress proxy's throughput against a direct download, in one run: a local HTTP
// server sends 100 MiB; a confined `curl` fetches it from a --network host engine (direct), and
// from a --network proxy engine (127.0.0.1:PORT named with --allow-host) both as plain HTTP
// forwarded by the proxy and through a CONNECT tunnel (curl -p). Rounds take turns; medians.
//
//   pnpm build && node bench/proxy-throughput.mjs [--rounds 5] [--mib 100]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createEngine } from '@ahma/core';
import { numberOption } from './args.mjs';

const ROUNDS = numberOption('rounds', 5);
const MIB = numberOption('mib', 100);
const scope = mkdtempSync('/var/tmp/ahma-bench-proxy-');
process.on('exit', () => rmSync(scope, { recursive: true, force: true }));

const block = Buffer.alloc(1 << 20, 'x');
const server = createServer((_, response) => {
  response.setHeader('content-length', String(MIB << 20));
  let sent = 0;
  const more = () => {
    while (sent < MIB) {
      sent++;
      if (!response.write(block)) return void response.once('drain', more);
    }
    response.end();
  };
  more();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${String(server.address().port)}/`;

const host = await createEngine({ scope });
const proxy = await createEngine({
  scope,
  network: 'proxy',
  allowHosts: [`127.0.0.1:${String(server.address().port)}`],
});
const ways = {
  direct: [host, ''],
  'proxy, plain HTTP': [proxy, ''],
  'proxy, CONNECT tunnel': [proxy, '-p '],
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const seconds = Object.fromEntries(Object.keys(ways).map((way) => [way, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [way, [engine, flags]] of Object.entries(ways)) {
    const result = await engine.executor.run({
      command: {
        kind: 'shell',
        script: `curl -sS ${flags}-o /dev/null -w '%{time_total} %{size_download}' ${url}`,
      },
      cwd: scope,
      logName: 'x',
    });
    const [time, size] = result.output.trim().split(' ').map(Number);
    if (result.status !== 'completed' || size !== MIB << 20) {
      throw new Error(`${way}: ${result.output}`);
    }
    seconds[way].push(time);
  }
}
await host.close();
await proxy.close();
server.close();

const direct = median(seconds.direct);
process.stdout.write(
  [
    `# ${String(MIB)} MiB through the egress proxy against direct — node ${process.version}, ${String(ROUNDS)} rounds`,
    '',
    '| way | seconds (rounds) | median s | MiB/s | time / direct |',
    '| --- | --- | ---: | ---: | ---: |',
    ...Object.entries(seconds).map(
      ([way, values]) =>
        `| ${way} | ${values.map((v) => v.toFixed(3)).join(', ')} | ${median(values).toFixed(3)} | ${(MIB / median(values)).toFixed(0)} | ${(median(values) / direct).toFixed(2)} |`,
    ),
    '',
  ].join('\n'),
);
