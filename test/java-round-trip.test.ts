// A mod author in Java generates models from schemas/asyncapi.json (Modelina, Jackson preset) and
// reads the stream with Jackson. Every frame the real relay sends must deserialize into its class
// with all its fields: a timestamp needs int64 (an Integer refuses epoch milliseconds), the payload
// union needs its `type` discriminator (without it Jackson guesses by fields, and fails).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payloadComponentName, PAYLOAD_TYPES, type PayloadType } from '../schemas/payload-types.js';
import { compileAndRun, generateJavaModels, javaMissing } from './helpers/java.js';
import { recordFrames, type RecordedFrame } from './helpers/recorded-frames.js';
import { RelayFixture } from './helpers/relay.js';

const PACKAGE = 'relay.models';

/** Reads each line "kind<TAB>json" into its class and prints "Class<TAB>the object as JSON again". */
const ROUND_TRIP = `package relay;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Paths;
import ${PACKAGE}.*;
public class RoundTrip {
  public static void main(String[] args) throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    for (String line : Files.readAllLines(Paths.get(args[0]))) {
      String[] parts = line.split("\\t", 2);
      Class<?> target = switch (parts[0]) {
        case "payload" -> Payload.class;
        case "meta" -> MetaFrame.class;
        case "close" -> CloseEvent.class;
        default -> ErrorBody.class;
      };
      try {
        Object value = mapper.readValue(parts[1], target);
        System.out.println(value.getClass().getSimpleName() + "\\t" + mapper.writeValueAsString(value));
      } catch (Exception e) {
        System.out.println("ERROR\\t" + e.getMessage().split("\\n")[0]);
      }
    }
  }
}
`;

function expectedClass(frame: RecordedFrame): string {
  if (frame.kind === 'payload') return payloadComponentName(frame.label === 'server keepalive' ? 'keepalive' : (frame.label as PayloadType));
  return { meta: 'MetaFrame', close: 'CloseEvent', error: 'ErrorBody' }[frame.kind];
}

let dir: string;
let relay: RelayFixture;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'java-round-trip-'));
  relay = await RelayFixture.start({ env: { BATCH_MAX_ENTRIES: '2', KEEPALIVE_INTERVAL: '1s' } });
});
afterAll(async () => {
  await relay?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Java models generated from schemas/asyncapi.json', () => {
  it('read every frame the relay sends (each payload type, meta, close, refusals) into its class with every field', async () => {
    const missing = await javaMissing();
    if (missing !== null) throw new Error(`Java is needed for this test: ${missing}`);
    const frames = await recordFrames(relay);
    expect(new Set(frames.filter((f) => f.kind === 'payload').map((f) => f.label))).toEqual(new Set([...PAYLOAD_TYPES, 'server keepalive']));

    const document = JSON.parse(readFileSync(new URL('../schemas/asyncapi.json', import.meta.url), 'utf8')) as object;
    const classes = await generateJavaModels(document, dir, PACKAGE);
    expect(classes.filter((c) => /^Anonym/.test(c)), 'every generated class has a name from the document').toEqual([]);
    const input = join(dir, 'frames.txt');
    writeFileSync(input, frames.map((f) => `${f.kind}\t${f.text}`).join('\n') + '\n');
    const out = await compileAndRun(dir, { 'relay/RoundTrip.java': ROUND_TRIP }, 'relay.RoundTrip', [input]);

    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(frames.length);
    frames.forEach((frame, i) => {
      const [cls, json] = lines[i]!.split('\t', 2) as [string, string];
      const what = `${frame.kind} ${frame.label}: ${frame.text}`;
      expect(cls, `${what} -> ${json}`).toBe(expectedClass(frame));
      expect(unordered(JSON.parse(json)), what).toEqual(unordered(JSON.parse(frame.text)));
    });
  }, 180_000);
});

/**
 * resend_request's `include` has uniqueItems: generators make it a Java Set, whose order (an enum's
 * hash, different in every JVM) is not the order sent; its members, not their order, are compared.
 */
function unordered(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('include' in value) || !Array.isArray(value.include)) return value;
  return { ...value, include: [...(value.include as unknown[])].map(String).sort() };
}
