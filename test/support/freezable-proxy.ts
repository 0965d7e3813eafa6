/**
 * A TCP proxy on 127.0.0.1 in front of one port, whose client-to-server direction can be frozen: what a client
 * sends is then dropped, as bytes a node that is going away never reads, while what the server sends still
 * arrives. `cut()` then closes every connection, as the node's going does, and lets new ones through again.
 */
import { createConnection, createServer, type Socket } from 'node:net';
import { closeTogether } from '../../dev/tcp-balancer.js';

export interface FreezableProxy {
  readonly port: number;
  /** From now on, what clients send is dropped. */
  freeze(): void;
  /** Closes every connection; new ones pass both ways again. */
  cut(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(targetPort: number): Promise<FreezableProxy> {
  let frozen = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    open.add(client).add(upstream);
    closeTogether(client, upstream, open);
    client.on('data', (chunk: Buffer) => {
      if (!frozen) upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    freeze: () => void (frozen = true),
    cut() {
      for (const socket of open) socket.destroy();
      open.clear();
      frozen = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
