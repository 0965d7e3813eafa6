/**
 * A broker that comes up late, as seen by one client: two loopback ports (binary protocol and web service)
 * that refuse connections until `open()`, then forward every connection to the real test broker. A process
 * pointed at these ports meets exactly what it meets when it starts before the broker: connection refused,
 * for as long as the test likes, then a working broker.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../../dev/ports.js';

export interface LateBroker {
  /** `pulsar://127.0.0.1:<port>`: refused until open(). */
  readonly serviceUrl: string;
  /** `ws://127.0.0.1:<port>`: refused until open(). */
  readonly webSocketUrl: string;
  /** Start forwarding to the real broker. */
  open(): Promise<void>;
  close(): Promise<void>;
}

export async function lateBroker(target: { serviceUrl: string; webSocketUrl: string }): Promise<LateBroker> {
  const [binaryPort, webPort] = [await freePort(), await freePort()];
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const forward = (listenPort: number, targetUrl: string): Promise<void> => {
    const { hostname, port } = new URL(targetUrl);
    const server = createServer((client) => {
      const upstream = createConnection({ host: hostname, port: Number(port) });
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => resolve());
    });
  };
  return {
    serviceUrl: `pulsar://127.0.0.1:${binaryPort}`,
    webSocketUrl: `ws://127.0.0.1:${webPort}`,
    async open() {
      await forward(binaryPort, target.serviceUrl.replace(/^pulsar:/, 'tcp:'));
      await forward(webPort, target.webSocketUrl.replace(/^ws:/, 'http:'));
    },
    async close() {
      sockets.forEach((socket) => socket.destroy());
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}
