import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../dev/ports.js';
import { serviceUrlAddresses, untilServiceUrlReachable } from '../../../src/bus/pulsar/service-url-reachable.js';

describe('serviceUrlAddresses', () => {
  it('reads every host of a service URL, with the protocol default port where none is given', () => {
    expect(serviceUrlAddresses('pulsar://pulsar:6650')).toEqual([{ host: 'pulsar', port: 6650 }]);
    expect(serviceUrlAddresses('pulsar://a,b:7000')).toEqual([
      { host: 'a', port: 6650 },
      { host: 'b', port: 7000 },
    ]);
    expect(serviceUrlAddresses('pulsar+ssl://broker/')).toEqual([{ host: 'broker', port: 6651 }]);
    expect(serviceUrlAddresses('pulsar://[::1]:6650')).toEqual([{ host: '::1', port: 6650 }]);
    expect(serviceUrlAddresses('http://x')).toEqual([]);
  });
});

describe('untilServiceUrlReachable', () => {
  it('resolves once the port accepts connections', async () => {
    const port = await freePort();
    const server = createServer((socket) => socket.destroy());
    setTimeout(() => server.listen(port, '127.0.0.1'), 300);
    try {
      await untilServiceUrlReachable(`pulsar://127.0.0.1:${port}`, 10_000);
      expect(server.listening).toBe(true);
    } finally {
      server.close();
    }
  });

  it('rejects after the timeout, naming the broker and why', async () => {
    const port = await freePort();
    await expect(untilServiceUrlReachable(`pulsar://127.0.0.1:${port}`, 300)).rejects.toThrow(
      new RegExp(`^the broker at pulsar://127\\.0\\.0\\.1:${port} does not accept connections: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`),
    );
  });
});
