/**
 * The table of message backends (src/backends.ts) as the settings read it: each backend's options reach the
 * service's settings and its --help as they are declared, and no two options take the same name.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BACKENDS, backendNamed } from '../../../src/backends.js';
import { defineBackend } from '../../../src/bus/backend.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { loadSettings, OPTIONS, PUBSUB_BACKENDS, SettingsSchema } from '../../../src/settings.js';

describe('the backend table', () => {
  it('names the values of --pubsub-backend, Pulsar first', () => {
    expect(PUBSUB_BACKENDS).toEqual(BACKENDS.map((backend) => backend.name));
    expect(PUBSUB_BACKENDS[0]).toBe('pulsar');
    expect(backendNamed('kafka').name).toBe('kafka');
  });

  it("puts each backend's option fields into the settings unchanged, none shared with another backend", () => {
    const keys = BACKENDS.flatMap((backend) => Object.keys(backend.settings));
    expect(new Set(keys).size).toBe(keys.length);
    for (const backend of BACKENDS) {
      for (const [key, field] of Object.entries(backend.settings)) {
        expect(SettingsSchema.shape[key as keyof typeof SettingsSchema.shape], `${backend.name}: ${key}`).toBe(field);
      }
    }
  });

  it("lists each backend's options in --help, and no flag or environment variable twice", () => {
    for (const backend of BACKENDS) {
      for (const option of backend.options) expect(OPTIONS).toContain(option);
    }
    const flags = OPTIONS.flatMap((option) => [option.flag, ...(option.short ? [option.short] : [])]);
    const envs = OPTIONS.flatMap((option) => (option.env ? [option.env] : []));
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(envs).size).toBe(envs.length);
  });
});

describe('a backend descriptor', () => {
  it('may have no options: it takes the service\'s settings as they are (a type check as much as a run)', async () => {
    const bare = defineBackend({ name: 'bare', settings: {}, options: [], create: async () => new MemoryTransport() });
    const transport = await bare.create(loadSettings([], {}).settings!, { logger: pino({ level: 'silent' }) });
    expect(transport.kind).toBe('memory');
    await transport.close();
  });
});
