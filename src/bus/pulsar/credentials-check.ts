/**
 * A start-up check that the broker accepts our credentials, so a wrong or missing `--pulsar-api-key` stops
 * the start with a message naming the option instead of an endless reconnect. (The C++ client behind the
 * native transport treats a refused CONNECT like a network error: it retries until the operation times out
 * and then reports only `TimeOut`.)
 *
 * - native: one binary-protocol handshake (CONNECT with the token; the broker answers CONNECTED or ERROR,
 *   https://pulsar.apache.org/docs/next/developing-binary-protocol/), then the socket is closed;
 * - websocket: one HTTP request with the token to the broker's web service, whose 401 means refused.
 *
 * A broker that cannot be reached is not a refusal: the transports retry that as usual.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import type { Logger } from 'pino';
import { errorMessage } from '../../errors/index.js';
import { shownBroker } from '../backend.js';
import { CredentialsRefusedError } from '../errors.js';
import { serviceUrlAddresses } from './service-url-reachable.js';

export type CredentialsVerdict = { accepted: true } | { accepted: false; reason: string } | { accepted: undefined; reason: string };

// BaseCommand.Type values (PulsarApi.proto).
const CONNECT = 2;
const CONNECTED = 3;

/** Protobuf varint. */
function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

/** A length-delimited protobuf field (wire type 2). */
function field(tag: number, value: Buffer): Buffer {
  return Buffer.concat([varint((tag << 3) | 2), varint(value.length), value]);
}

/** The CONNECT frame: BaseCommand{type: CONNECT, connect: CommandConnect{client_version, auth_*, protocol_version}}. */
export function connectFrame(token: string | undefined): Buffer {
  const connect = Buffer.concat([
    field(1, Buffer.from('tg-agent-credentials-check')),
    ...(token !== undefined ? [field(5, Buffer.from('token')), field(3, Buffer.from(token))] : []),
    Buffer.concat([varint((4 << 3) | 0), varint(19)]),
  ]);
  const command = Buffer.concat([varint((1 << 3) | 0), varint(CONNECT), field(2, connect)]);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(command.length + 4, 0);
  header.writeUInt32BE(command.length, 4);
  return Buffer.concat([header, command]);
}

/** The command type of a frame: field 1 of BaseCommand, which every encoder writes first. */
export function commandType(frame: Buffer): number | undefined {
  if (frame.length < 10 || frame[8] !== 0x08) return undefined;
  return frame[9];
}

/** The readable text in an ERROR frame (the broker's message), for the log. */
function readableText(frame: Buffer): string {
  return (frame.subarray(8).toString('latin1').match(/[\x20-\x7e]{4,}/g) ?? []).join(' ').trim();
}

export async function checkNativeCredentials(options: {
  serviceUrl: string;
  token: string | undefined;
  tlsTrustCertsFile?: string;
  timeoutMs?: number;
}): Promise<CredentialsVerdict> {
  // A cluster's service URL names several brokers (`pulsar://a:6650,b:6650`), which no URL parser takes; they share
  // the credentials, so the first one answers for all.
  const secure = options.serviceUrl.startsWith('pulsar+ssl://');
  const [first] = serviceUrlAddresses(options.serviceUrl);
  if (!first) return { accepted: undefined, reason: `not a pulsar:// service URL: ${options.serviceUrl}` };
  const { host, port } = first;
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    // eslint-disable-next-line prefer-const -- assigned once below; finish() needs it declared first
    let socket: Socket | undefined;
    const finish = (verdict: CredentialsVerdict): void => {
      clearTimeout(timer);
      socket?.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => finish({ accepted: undefined, reason: 'no answer to CONNECT in time' }), options.timeoutMs ?? 10_000);
    const onConnect = (): void => {
      socket?.write(connectFrame(options.token));
    };
    socket = secure
      ? tlsConnect(
          { host, port, servername: host, ...(options.tlsTrustCertsFile ? { ca: readFileSync(options.tlsTrustCertsFile) } : {}) },
          onConnect,
        )
      : tcpConnect({ host, port }, onConnect);
    const connected: Socket = socket;
    connected.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4 || received.length < received.readUInt32BE(0) + 4) return;
      const type = commandType(received);
      if (type === CONNECTED) finish({ accepted: true });
      else finish({ accepted: false, reason: readableText(received) || `answer of type ${type ?? 'unknown'}` });
    });
    connected.on('error', (err) => finish({ accepted: undefined, reason: err.message }));
    connected.on('close', () => {
      if (received.length === 0) finish({ accepted: undefined, reason: 'connection closed before an answer' });
    });
  });
}

export async function checkWebSocketCredentials(options: { webSocketUrl: string; token: string | undefined; timeoutMs?: number }): Promise<CredentialsVerdict> {
  const url = new URL(options.webSocketUrl.replace(/^ws/, 'http'));
  // Never into a request (fetch refuses them) or a log line.
  url.username = '';
  url.password = '';
  const base = url.toString().replace(/\/+$/, '');
  try {
    const response = await fetch(`${base}/admin/v2/clusters`, {
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    await response.body?.cancel();
    if (response.status === 401) return { accepted: false, reason: `HTTP 401 from ${base}` };
    return { accepted: true };
  } catch (err) {
    return { accepted: undefined, reason: errorMessage(err) };
  }
}

/** Throws CredentialsRefusedError, naming the option, when the broker refused; an unreachable broker passes. */
export async function refuseUnlessAccepted(
  verdict: CredentialsVerdict,
  url: string,
  token: string | undefined,
  logger: Logger,
  close: () => Promise<void>,
): Promise<void> {
  if (verdict.accepted === undefined) {
    logger.warn({ reason: verdict.reason }, 'Could not check the broker credentials now; the transport keeps trying to connect');
  }
  if (verdict.accepted !== false) return;
  await close().catch(() => undefined);
  const broker = shownBroker(url);
  throw new CredentialsRefusedError(
    token
      ? `the broker at ${broker} refused the token given with --pulsar-api-key (PULSAR_API_KEY): ${verdict.reason}`
      : `the broker at ${broker} requires authentication: set --pulsar-api-key (PULSAR_API_KEY) to a token it accepts (${verdict.reason})`,
  );
}
