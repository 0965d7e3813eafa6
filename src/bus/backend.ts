/**
 * A message backend as a plug-in (design decision 12 (docs/design.md)): a folder under src/bus exports one
 * descriptor of this shape, and one line of src/backends.ts lists it. The service's settings (src/settings.ts)
 * take its options from the descriptor, with their checks, flags, environment variables and help lines, and the
 * transport chooser (src/create-transport.ts) its `create`. Nothing outside the folder knows the backend by name.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import { CodedError, redactUrl } from '../errors/index.js';
import type { Transport } from './transport.js';

/** One command-line option: the settings key it sets, its flag (and short flag), environment variable and help. */
export interface OptionSpec<Key extends string = string> {
  readonly key: Key;
  readonly flag: string;
  readonly short?: string;
  readonly env?: string;
  readonly boolean?: boolean;
  readonly help: string;
  /**
   * A credential the logger and the HTTP endpoints mask wherever it shows (src/settings-secrets.ts): the whole
   * value (`value`), or a URL's password and credential-like query values (`url`). A value left at its default is
   * public knowledge and is not masked.
   */
  readonly secret?: 'value' | 'url';
}

/** An option holding a whole number from `min` to `max`, given as a number or as text (flags, environment). */
export const positiveInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** What a backend's options give it once validated (a backend without options gets an empty object). */
export type BackendSettings<Shape extends z.ZodRawShape> = [keyof Shape] extends [never]
  ? Readonly<Record<never, never>>
  : Readonly<z.output<z.ZodObject<Shape>>>;

/** The broker's admin API (Pulsar's REST API): read for the broker's drop statistics of the agent's subscriptions. */
export interface AdminApi {
  readonly url: string;
  readonly token?: string;
}

/** What a backend's `create` is given besides its settings. */
export interface BackendContext {
  readonly logger: Logger;
}

/**
 * One backend. `Context` is what its `create` is given besides its settings: the service's logger for a backend
 * of the table; a backend that offers several transports (Pulsar) gives its own transports what they share.
 */
export interface Backend<Name extends string = string, Shape extends z.ZodRawShape = z.ZodRawShape, Context = BackendContext> {
  /** The value of `--pubsub-backend` that chooses it (TrustGraph's name). */
  readonly name: Name;
  /** Its options' schema fields, each with its default and its checks; merged into the service's settings. */
  readonly settings: Shape;
  /** Its options' flags, environment variables and help lines, in `--help` order. */
  readonly options: readonly OptionSpec<Extract<keyof Shape, string>>[];
  /** Checks across its options, when it is the chosen backend; throws a BackendOptionsError naming them. */
  check?(settings: BackendSettings<Shape>): void;
  /** Its transport, from the validated settings. */
  create(settings: BackendSettings<Shape>, context: Context): Promise<Transport>;
  /** The broker's admin API, where the backend has one; undefined when it is turned off. */
  adminApi?(settings: BackendSettings<Shape>): AdminApi | undefined;
}

/** A backend descriptor, its name and option keys kept as literal types. */
export function defineBackend<const Name extends string, Shape extends z.ZodRawShape, Context = BackendContext>(
  backend: Backend<Name, Shape, Context>,
): Backend<Name, Shape, Context> {
  return backend;
}

/** A combination of a backend's options that cannot work; the message names the options and what they accept. */
export class BackendOptionsError extends CodedError {
  override readonly name = 'BackendOptionsError';
  readonly code = 'TG_BACKEND_OPTIONS_INVALID';
}

/** The one log line of a transport's start: which, the broker (without secrets), and why this one. */
export function logTransportStart(logger: Logger, transport: string, url: string, why: string): void {
  const broker = shownBroker(url);
  logger.info({ transport, broker, why }, `Transport: ${transport}, broker ${broker}`);
}

/** The broker's URL as logs and errors show it: no credentials, no query, no trailing slash. */
export function shownBroker(url: string): string {
  return redactUrl(url).replace(/\/$/, '');
}
