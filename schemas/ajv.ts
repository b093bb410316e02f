// One ajv instance for the whole relay. removeAdditional strips unknown members wherever a schema
// says additionalProperties: false, which is how unknown fields of known payloads are dropped.

import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

// strict: false also turns off strictNumbers, which would let Infinity (JSON.parse of 1e400) pass
// as a number or an integer and reach every client as null: turn it back on.
export const ajv = new Ajv({ allErrors: true, removeAdditional: true, strict: false, strictNumbers: true, verbose: true });
// Annotation naming what a pattern means, so errors read "must be a UUID" rather than a regex.
ajv.addKeyword({ keyword: 'x-expected', schemaType: 'string' });
addFormats.default(ajv);
