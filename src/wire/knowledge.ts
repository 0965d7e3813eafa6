/**
 * `schema/core/metadata.py` + `schema/triples.py` (TrustGraph 2.11.1, unchanged since 2.8): `Triples`, published fire-and-forget on the
 * `explainability` flow topic.
 */
import { z } from 'zod';
import { TripleSchema, type Triple } from './primitives.js';
import { defineMessage, list, optRecord, str } from './schema-kit.js';

export const MetadataSchema = z.object({
  /** The entity URI the triples describe. */
  id: str(),
  root: str(),
  collection: str(),
});
export type Metadata = z.output<typeof MetadataSchema>;
export type MetadataInput = z.input<typeof MetadataSchema>;

export const TriplesSchema = z.object({
  /** `null` only in the all-defaults message; the agent always fills it. */
  metadata: optRecord(MetadataSchema),
  triples: list(TripleSchema),
});
export type Triples = z.output<typeof TriplesSchema>;
export type TriplesInput = z.input<typeof TriplesSchema>;

const triples = defineMessage('Triples', TriplesSchema);
const metadata = defineMessage('Metadata', MetadataSchema);

export const triplesCodec = triples.codec;
export const makeTriples = triples.make;
export const makeMetadata = metadata.make;

/** A Triples message from a metadata record and triples already in their output form, without running zod. */
export function triplesOf(metadata: Metadata, list: Triple[]): Triples {
  return triples.trust({ metadata: { id: metadata.id, root: metadata.root, collection: metadata.collection }, triples: list });
}
