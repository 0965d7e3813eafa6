/**
 * `trustgraph-base/trustgraph/schema/core/primitives.py`: Error, Term, Triple.
 * Triples travel in the internal dataclass form (every Term field present), not the gateway's compact form.
 */
import { z } from 'zod';
import { defineMessage, optRecord, optStr, str } from './schema-kit.js';

/** TrustGraph's `Error` record. There is no `code` field. */
export const ErrorRecordSchema = z.object({
  type: str(),
  message: str(),
});
export type ErrorRecord = z.output<typeof ErrorRecordSchema>;
export type ErrorRecordInput = z.input<typeof ErrorRecordSchema>;

/** The `error` field every response carries: `null` on success (any object, even empty, means failure). */
export const errorField = () => optRecord(ErrorRecordSchema);

/** Term types: `i` IRI, `b` blank node, `l` literal, `t` quoted triple. */
export const TERM_IRI = 'i';
export const TERM_BLANK = 'b';
export const TERM_LITERAL = 'l';
export const TERM_TRIPLE = 't';

export interface Term {
  type: string;
  iri: string;
  id: string;
  value: string;
  datatype: string;
  language: string;
  triple: Triple | null;
}

export interface Triple {
  s: Term | null;
  p: Term | null;
  o: Term | null;
  g: string | null;
}

export interface TermInput {
  type?: string | null | undefined;
  iri?: string | null | undefined;
  id?: string | null | undefined;
  value?: string | null | undefined;
  datatype?: string | null | undefined;
  language?: string | null | undefined;
  triple?: TripleInput | null | undefined;
}

export interface TripleInput {
  s?: TermInput | null | undefined;
  p?: TermInput | null | undefined;
  o?: TermInput | null | undefined;
  g?: string | null | undefined;
}

export const TermSchema: z.ZodType<Term, TermInput> = z.object({
  type: str(),
  iri: str(),
  id: str(),
  value: str(),
  datatype: str(),
  language: str(),
  triple: optRecord(z.lazy(() => TripleSchema)),
});

export const TripleSchema: z.ZodType<Triple, TripleInput> = z.object({
  s: optRecord(TermSchema),
  p: optRecord(TermSchema),
  o: optRecord(TermSchema),
  g: optStr(),
});

const termMessage = defineMessage('Term', TermSchema);
const tripleMessage = defineMessage('Triple', TripleSchema);
const errorMessage = defineMessage('Error', ErrorRecordSchema);

export const termCodec = termMessage.codec;
export const tripleCodec = tripleMessage.codec;
export const errorRecordCodec = errorMessage.codec;
export const makeTerm = termMessage.make;
export const makeTriple = tripleMessage.make;
export const makeErrorRecord = errorMessage.make;

// iriTerm and literalTerm build the Term directly (what makeTerm would return: every field, in schema order):
// their inputs are typed strings, and an iteration makes dozens of terms, so zod is not run over each.

/** An IRI term with every other field at its default. */
export function iriTerm(iri: string): Term {
  return { type: TERM_IRI, iri, id: '', value: '', datatype: '', language: '', triple: null };
}

/** A literal term (plain, typed or language-tagged). */
export function literalTerm(value: string, options: { datatype?: string; language?: string } = {}): Term {
  return { type: TERM_LITERAL, iri: '', id: '', value, datatype: options.datatype ?? '', language: options.language ?? '', triple: null };
}
