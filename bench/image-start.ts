/**
 * How fast the image starts: from `docker run` to `/healthz` answering and to `/readyz` saying ready (broker
 * connected, configuration loaded, the flow subscribed), against a real broker and TrustGraph's config service
 * (the stand-in) holding one flow.
 *
 *   npm run bench:image-start [-- --runs 5 --image tg-agent:local]
 *
 * Takes about 2 min for 5 runs (plus up to 10 min waiting for the 1-minute load average to drop
 * under --max-load).
 *
 * Needs: a Docker engine and the image (npm run image:build); a Pulsar broker: Java 17+ and Maven
 * (tools/pulsar-standalone, from Maven Central jars), a Docker engine, or PULSAR_URL.
 *
 * Needs a Docker engine (scripts/image/dockerd.sh) and the image (npm run image:build). The container shares
 * the host's network, as in test/integration/image.test.ts: the broker listens on 127.0.0.1.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { agentFlowConfig } from '../dev/flow-config.js';
import { startConfigService } from '../dev/stand-ins/config-service.js';
import { WebSocketTransport } from '../src/bus/pulsar/websocket/websocket-transport.js';
import { freePort, startBenchBroker } from './support/broker.js';
import { benchFlags } from './support/options.js';
import { header, log, withCleanup } from './support/run.js';
import { ms, numberFlag, sleep, summarize, table } from './support/stats.js';

const flags = benchFlags(import.meta.url);
const RUNS = numberFlag(flags, 'runs', 5);
const IMAGE = flags.get('image') ?? 'tg-agent:local';
const docker = (args: string[]) => promisify(execFile)('docker', args, { maxBuffer: 16 * 1024 * 1024 });

/** Milliseconds from `startedAt` until `url` answers 200 (polled every 20 ms), or Infinity after 60 s. */
async function untilOk(url: string, startedAt: number): Promise<number> {
  while (Date.now() - startedAt < 60_000) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false);
    if (ok) return Date.now() - startedAt;
    await sleep(20);
  }
  return Infinity;
}

await withCleanup(async (defer) => {
  const broker = await startBenchBroker({ log });
  defer(() => broker.stop());
  const transport = new WebSocketTransport({ url: broker.webSocketUrl });
  defer(() => transport.close());
  const config = await startConfigService({ transport });
  defer(() => config.stop());
  await config.put('default', 'processor:agent-manager', 'default', agentFlowConfig('default', 'default'));
  const size = Number((await docker(['image', 'inspect', '--format', '{{.Size}}', IMAGE])).stdout.trim());

  const healthy: number[] = [];
  const ready: number[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const port = await freePort();
    const startedAt = Date.now();
    const { stdout } = await docker([
      'run', '-d', '--rm', '--read-only', '--network', 'host', '-e', `TG_AGENT_METRICS_PORT=${port}`, IMAGE,
      '--pulsar-host', broker.serviceUrl, '--pulsar-ws-url', broker.webSocketUrl,
    ]);
    const id = stdout.trim();
    try {
      const [h, r] = await Promise.all([untilOk(`http://127.0.0.1:${port}/healthz`, startedAt), untilOk(`http://127.0.0.1:${port}/readyz`, startedAt)]);
      healthy.push(h);
      ready.push(r);
      log(`run ${run}: /healthz after ${ms(h, 0)}, ready after ${ms(r, 0)}`);
    } finally {
      await docker(['stop', '-t', '10', id]).catch(() => undefined);
    }
  }
  const h = summarize(healthy);
  const r = summarize(ready);
  process.stdout.write(
    [
      header('Image start', broker, [`image ${IMAGE}, ${(size / 1e6).toFixed(0)} MB; ${RUNS} runs, host network, read-only root`]),
      table(
        ['from docker run to', 'median', 'min', 'max'],
        [
          ['/healthz 200', ms(h.p50, 0), ms(Math.min(...healthy), 0), ms(h.max, 0)],
          ['/readyz ready', ms(r.p50, 0), ms(Math.min(...ready), 0), ms(r.max, 0)],
        ],
        ['l', 'r', 'r', 'r'],
      ),
      '',
    ].join('\n'),
  );
});
