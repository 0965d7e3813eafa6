/**
 * Pulsar's binary protocol through the `pulsar-client` binding (`--transport native`): the protocol TrustGraph's
 * own services speak. Its options are the ones only it reads; the Pulsar backend (../index.ts) gives it the
 * service URL, the token and the subscriber check.
 */
import { z } from 'zod';
import { defineBackend, logTransportStart } from '../../backend.js';
import { checkNativeCredentials, refuseUnlessAccepted } from '../credentials-check.js';
import type { PulsarLink } from '../pulsar-link.js';
import { NativeTransport } from './native-transport.js';
import { loadPulsarClient } from './pulsar-client-module.js';

export const nativeTransport = defineBackend({
  name: 'native',
  settings: {
    /** CA bundle (PEM) for a pulsar+ssl:// broker whose certificate no system CA signed. */
    pulsarTlsTrustCertsFile: z.string().min(1).optional(),
    /** The broker listener to connect through (Pulsar `advertisedListeners`). */
    pulsarListener: z.string().min(1).optional(),
  },
  options: [
    { key: 'pulsarTlsTrustCertsFile', flag: 'pulsar-tls-trust-certs', env: 'PULSAR_TLS_TRUST_CERTS', help: 'CA bundle (PEM) that signed the broker certificate, native transport (pulsar+ssl://)' },
    { key: 'pulsarListener', flag: 'pulsar-listener', help: 'broker listener name (advertisedListeners) to connect through, native transport' },
  ],
  /** Throws TransportUnavailableError where the binding does not load, CredentialsRefusedError where the broker refuses the token. */
  async create(settings, link: PulsarLink) {
    const binding = await loadPulsarClient();
    const transport = new NativeTransport(binding, {
      serviceUrl: link.serviceUrl,
      logger: link.logger,
      ...(link.token ? { token: link.token } : {}),
      ...(link.subscribers ? { subscribers: link.subscribers } : {}),
      ...(settings.pulsarTlsTrustCertsFile ? { tlsTrustCertsFile: settings.pulsarTlsTrustCertsFile } : {}),
      ...(settings.pulsarListener ? { listenerName: settings.pulsarListener } : {}),
    });
    logTransportStart(link.logger, 'native', link.serviceUrl, link.why);
    const verdict = await checkNativeCredentials({
      serviceUrl: link.serviceUrl,
      token: link.token,
      ...(settings.pulsarTlsTrustCertsFile ? { tlsTrustCertsFile: settings.pulsarTlsTrustCertsFile } : {}),
    });
    await refuseUnlessAccepted(verdict, link.serviceUrl, link.token, link.logger, () => transport.close());
    return transport;
  },
});
