// Public surface of the schemas package: client authors and both services import from here.
export * from './payload-types.js';
export * from './common.js';
export * from './payloads.js';
export * from './envelope.js';
export * from './meta.js';
export * from './close.js';
export * from './records.js';
export * from './uuid.js';
export { checkPayload, checkEnvelope, type ValidationIssue, type PayloadCheck, type EnvelopeCheck, type EnvelopeShellValue } from './validate.js';
