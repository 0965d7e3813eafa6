import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { describeTransportContract } from '../../support/transport-contract.js';

describeTransportContract('memory', () => new MemoryTransport(), { quietMs: 50, deliveryTimeoutMs: 2000 });
