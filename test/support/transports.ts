/**
 * The transports the integration tests run on: every one that loads here. WebSocket always does; native when
 * the `pulsar-client` binding loads (`npm run native:build` builds it where the prebuilt binary cannot be
 * downloaded). Under `CI=true` a native binding that does not load is an error, not a skip, so CI always tests
 * both. `TG_TEST_TRANSPORTS=websocket` (or `native`, or both comma-separated) narrows the list for a quick
 * local run.
 */
import type { Logger } from 'pino';
import { NativeTransport, type NativeTransportOptions } from '../../src/bus/pulsar/native/native-transport.js';
import { loadPulsarClient, type PulsarClientModule } from '../../src/bus/pulsar/native/pulsar-client-module.js';
import type { Transport } from '../../src/bus/transport.js';
import { WebSocketTransport, type WebSocketTransportOptions } from '../../src/bus/pulsar/websocket/websocket-transport.js';

export type TransportKind = 'websocket' | 'native';

export const ALL_TRANSPORTS: readonly TransportKind[] = ['websocket', 'native'];

let nativeBinding: PulsarClientModule | undefined;
/** Why the native transport cannot run here; undefined when it can. */
export let nativeUnavailable: string | undefined;
try {
  nativeBinding = await loadPulsarClient();
} catch (err) {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message.split('\n')[0] : String(err);
  nativeUnavailable = `pulsar-client binding does not load here (${cause}); run npm run native:build`;
  if (process.env.CI === 'true') {
    throw new Error(`CI=true: the native transport must be tested, but ${nativeUnavailable}`, { cause: err });
  }
}

/** The binding, for tests that use the native client directly (e.g. to publish a chunked message). */
export function pulsarClientModule(): PulsarClientModule {
  if (!nativeBinding) throw new Error(nativeUnavailable);
  return nativeBinding;
}

function requested(): TransportKind[] {
  const raw = process.env.TG_TEST_TRANSPORTS?.trim();
  if (!raw) return [...ALL_TRANSPORTS];
  const kinds = raw.split(',').map((k) => k.trim());
  for (const kind of kinds) {
    if (!(ALL_TRANSPORTS as readonly string[]).includes(kind)) {
      throw new Error(`TG_TEST_TRANSPORTS: unknown transport "${kind}" (use ${ALL_TRANSPORTS.join(', ')})`);
    }
  }
  return kinds as TransportKind[];
}

/** The transports to run the integration scenarios on. */
export function testTransports(): TransportKind[] {
  return requested().filter((kind) => kind !== 'native' || nativeBinding !== undefined);
}

/** The transports skipped here, with the reason (empty under CI, which fails instead). */
export function skippedTransports(): { kind: TransportKind; reason: string }[] {
  return requested()
    .filter((kind) => kind === 'native' && nativeBinding === undefined)
    .map((kind) => ({ kind, reason: nativeUnavailable ?? 'unavailable' }));
}

export interface TestTransportOptions {
  webSocketUrl: string;
  serviceUrl: string;
  logger: Logger;
  /** Extra options when the transport is WebSocket. */
  webSocket?: Omit<WebSocketTransportOptions, 'url' | 'logger'>;
  /** Extra options when the transport is native. */
  native?: Omit<NativeTransportOptions, 'serviceUrl' | 'logger'>;
}

export function createTestTransport(kind: TransportKind, options: TestTransportOptions): Transport {
  if (kind === 'native') {
    return new NativeTransport(pulsarClientModule(), {
      ...options.native,
      serviceUrl: options.serviceUrl,
      logger: options.logger,
    });
  }
  return new WebSocketTransport({ ...options.webSocket, url: options.webSocketUrl, logger: options.logger });
}
