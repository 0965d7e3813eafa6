/**
 * Whether a broker's binary-protocol port accepts connections yet. The C++ client retries a lookup to a
 * broker that is down with a backoff that doubles up to 12.8 s within its operation timeout, so a client
 * started before the broker could sit out most of that after the broker came up; probing the port ourselves
 * every second at most lets the first lookup go out as soon as the port opens.
 */
import { createConnection } from 'node:net';
import { exponentialBackoff, retry } from '../../retry/index.js';
import { errorMessage } from '../../errors/index.js';
import { ConnectError } from '../errors.js';

/** `pulsar://a:6650,b:6650` → its hosts and ports (6650, or 6651 for `pulsar+ssl://`, where none is given). */
export function serviceUrlAddresses(serviceUrl: string): { host: string; port: number }[] {
  const match = /^pulsar(\+ssl)?:\/\/([^/]+)/.exec(serviceUrl);
  if (!match) return [];
  const defaultPort = match[1] ? 6651 : 6650;
  return (match[2] ?? '').split(',').map((part) => {
    const [, host = part, port] = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(part) ?? [];
    return { host, port: port ? Number(port) : defaultPort };
  });
}

function connects(address: { host: string; port: number }, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(address);
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(timeoutMs, () => fail(new ConnectError(`no answer within ${timeoutMs} ms`, `${address.host}:${address.port}`)));
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
  });
}

/**
 * Resolves once any address of `serviceUrl` accepts a TCP connection; rejects after `timeoutMs` with the
 * last reason (e.g. `connect ECONNREFUSED 10.0.0.5:6650`).
 */
export async function untilServiceUrlReachable(serviceUrl: string, timeoutMs: number): Promise<void> {
  const addresses = serviceUrlAddresses(serviceUrl);
  if (addresses.length === 0) return;
  await retry(() => Promise.any(addresses.map((address) => connects(address, 1000))), {
    backoff: exponentialBackoff({ initialMs: 100, maxMs: 1000 }),
    maxElapsedMs: timeoutMs,
  }).catch((error: unknown) => {
    const reasons = error instanceof AggregateError ? error.errors.map(errorMessage).join('; ') : errorMessage(error);
    throw new ConnectError(`the broker at ${serviceUrl} does not accept connections: ${reasons}`, serviceUrl, undefined, { cause: error });
  });
}
