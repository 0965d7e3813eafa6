/**
 * What both Pulsar transports connect with, from the Pulsar backend's options, and the URLs derived from
 * `--pulsar-host`: the broker's web service (the WebSocket API, the admin API) listens on port 8080 of the same
 * host unless an option says otherwise.
 */
import type { Logger } from 'pino';
import type { SubscriberCheck } from '../connection-status.js';
import type { TopicClientsReader } from './topic-clients.js';
import { serviceUrlAddresses } from './service-url-reachable.js';

export interface PulsarLink {
  /** `--pulsar-host`: the binary protocol's service URL, `pulsar://host:6650` or `pulsar+ssl://…`. */
  readonly serviceUrl: string;
  /** `--pulsar-api-key`: the token the broker authenticates. */
  readonly token: string | undefined;
  /** Who reads a non-persistent topic, asked after a reconnect before publishing to it; absent without the admin API. */
  readonly subscribers?: SubscriberCheck;
  /** The consumer and producer names the broker has on a topic (the admin API); absent without it. */
  readonly topicClients?: TopicClientsReader;
  readonly logger: Logger;
  /** Why this transport was chosen, for the start's log line. */
  readonly why: string;
}

/** `pulsar://host:6650` → `ws://host:8080`, the broker's default web service port; `--pulsar-ws-url` when given. */
export function webSocketUrlFor(settings: { readonly pulsarHost: string; readonly pulsarWebSocketUrl?: string | undefined }): string {
  if (settings.pulsarWebSocketUrl) return settings.pulsarWebSocketUrl.replace(/\/+$/, '');
  const match = /^pulsar(\+ssl)?:\/\/([^:/]+)/.exec(settings.pulsarHost);
  const host = match?.[2] ?? 'localhost';
  return `${match?.[1] ? 'wss' : 'ws'}://${host}:8080`;
}

/**
 * The broker's admin API: `--broker-admin-url`, else the web service of `--pulsar-host` (of each of its hosts, comma-
 * separated, when it names a cluster's brokers: `pulsar://a:6650,b:6650` → `http://a:8080,http://b:8080`);
 * undefined when `none`. A list is asked in turn (topic-stats.ts).
 */
export function brokerAdminUrlFor(settings: {
  readonly pulsarHost: string;
  readonly pulsarWebSocketUrl?: string | undefined;
  readonly brokerAdminUrl?: string | undefined;
}): string | undefined {
  if (settings.brokerAdminUrl === 'none') return undefined;
  if (settings.brokerAdminUrl) return settings.brokerAdminUrl.replace(/\/+$/, '');
  const hosts = serviceUrlAddresses(settings.pulsarHost);
  if (settings.pulsarWebSocketUrl || hosts.length < 2) return webSocketUrlFor(settings).replace(/^ws/, 'http');
  const scheme = settings.pulsarHost.startsWith('pulsar+ssl://') ? 'https' : 'http';
  return hosts.map(({ host }) => `${scheme}://${host.includes(':') ? `[${host}]` : host}:8080`).join(',');
}
