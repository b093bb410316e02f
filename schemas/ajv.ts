// One ajv instance for the whole relay. removeAdditional strips unknown members wherever a schema
// says additionalProperties: false, which is how unknown fields of known payloads are dropped.

import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

export const ajv = new Ajv({ allErrors: true, removeAdditional: true, strict: false, verbose: true });
// Annotation naming what a pattern means, so errors read "must be a UUID" rather than a regex.
ajv.addKeyword({ keyword: 'x-expected', schemaType: 'string' });
addFormats.default(ajv);
