/**
 * `schema/core/metadata.py` + `schema/knowledge/graph.py` (2.8): `Triples`, published fire-and-forget on the
 * `explainability` flow topic.
 */
import { z } from 'zod';
import { TripleSchema } from './primitives.js';
import { defineMessage, list, str } from './schema-kit.js';

export const MetadataSchema = z.object({
  /** The entity URI the triples describe. */
  id: str(),
  root: str(),
  collection: str(),
});
export type Metadata = z.output<typeof MetadataSchema>;
export type MetadataInput = z.input<typeof MetadataSchema>;

/** `metadata` is always an object on the wire; `null` or missing reads as the default Metadata. */
const metadataField = () =>
  MetadataSchema.nullish().transform((v): Metadata => v ?? { id: '', root: '', collection: '' });

export const TriplesSchema = z.object({
  metadata: metadataField(),
  triples: list(TripleSchema),
});
export type Triples = z.output<typeof TriplesSchema>;
export type TriplesInput = z.input<typeof TriplesSchema>;

const triples = defineMessage('Triples', TriplesSchema);
const metadata = defineMessage('Metadata', MetadataSchema);

export const triplesCodec = triples.codec;
export const makeTriples = triples.make;
export const makeMetadata = metadata.make;
