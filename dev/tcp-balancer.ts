/**
 * A TCP load balancer on 127.0.0.1, in front of a cluster's nodes, as a Kubernetes Service or HAProxy is in front of
 * a RabbitMQ cluster: each new connection goes to the next node in turn that accepts it, so a client that
 * reconnects after its node died lands on a live one. TrustGraph's RabbitMQ options name one host and port, and so
 * do the agent's; this is that host. Connections are piped both ways and closed together.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpBalancer {
  readonly port: number;
  close(): Promise<void>;
}

/** When either of a client's socket and its upstream closes or fails, both are closed and taken out of `open`. */
export function closeTogether(client: Socket, upstream: Socket, open: Set<Socket>): void {
  const end = (): void => {
    client.destroy();
    upstream.destroy();
    open.delete(client);
    open.delete(upstream);
  };
  client.on('error', end).on('close', end);
  upstream.on('error', end).on('close', end);
}

export async function startTcpBalancer(backends: readonly number[]): Promise<TcpBalancer> {
  let next = 0;
  const open = new Set<Socket>();
  const connectTo = (port: number): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.removeListener('error', reject);
        resolve(socket);
      });
      socket.once('error', reject);
    });
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('error', () => client.destroy());
    client.pause();
    const first = next++;
    void (async () => {
      for (let i = 0; i < backends.length; i++) {
        const port = backends[(first + i) % backends.length]!;
        try {
          const upstream = await connectTo(port);
          open.add(upstream);
          closeTogether(client, upstream, open);
          client.pipe(upstream).pipe(client);
          client.resume();
          return;
        } catch {
          // That node is down: the next.
        }
      }
      client.destroy();
      open.delete(client);
    })();
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
