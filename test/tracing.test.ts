// A message's way as one trace: an ingress and two gateways on one nats-server, exporting OTLP JSON
// over HTTP to a receiver run here. One chat posted through the ingress and delivered by both
// gateways is one trace: the POST's span, its publish span, and a deliver span from each gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../services/core/config.js';
import type { CreatedKey } from '../services/core/keys.js';
import { runCli } from './helpers/cli.js';
import { OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { startProfileApi, type FakeProfileApi } from './helpers/profile-api.js';
import { RelayFixture } from './helpers/relay.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

const CH = 'traced.example.net';
const SERVER = 2;
const PRODUCER = 4;
const CONSUMER = 5;

let receiver: OtlpReceiver;
let nats: TestNats;
let profile: FakeProfileApi;
let ingress: RelayFixture;
let gatewayA: RelayFixture;
let gatewayB: RelayFixture;
/** An ingress with tracing off, on the same event log. */
let untraced: RelayFixture;
let key: CreatedKey;

const traced = (name: string): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_TRACES_SAMPLER: 'always_on',
  OTEL_SERVICE_NAME: name,
});

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  nats = await startTestNats();
  profile = await startProfileApi();
  gatewayA = await RelayFixture.start({ service: 'gateway', nats, profile, env: traced('gateway-a') });
  // Created before the others start, so each loads it at start.
  key = await gatewayA.createKey();
  gatewayB = await RelayFixture.start({ service: 'gateway', nats, profile, env: traced('gateway-b') });
  ingress = await RelayFixture.start({ service: 'ingress', nats, profile, env: traced('ingress') });
  untraced = await RelayFixture.start({ service: 'ingress', nats, profile });
});
afterAll(async () => {
  await untraced?.close();
  await ingress?.close();
  await gatewayB?.close();
  await gatewayA?.close();
  await profile?.close();
  await nats?.stop();
  await receiver?.close();
});

const inTrace = (spans: readonly ReceivedSpan[], traceId: string): ReceivedSpan[] => spans.filter((s) => s.traceId === traceId);

/** Posts one body through the traced ingress; resolves with its trace once `gateways` deliver spans are in. */
async function postTraced(body: unknown, headers: Record<string, string>, gateways = 2): Promise<{ spans: ReceivedSpan[]; seq: number }> {
  const before = receiver.spans.length;
  const r = await ingress.post(body, headers);
  expect(r.status).toBe(200);
  const publish = (all: readonly ReceivedSpan[]): ReceivedSpan | undefined => all.slice(before).find((s) => s.name === 'publish');
  const all = await receiver.until((spans) => {
    const p = publish(spans);
    if (p === undefined) return false;
    const t = inTrace(spans, p.traceId);
    return t.some((s) => s.name === 'POST /') && t.filter((s) => s.name === 'deliver').length === gateways;
  });
  const p = publish(all)!;
  return { spans: inTrace(all, p.traceId), seq: Number(p.attributes['relay.sequence']) };
}

describe('a message’s way as a trace', () => {
  it('one chat posted through an ingress and delivered by two gateways is one trace: POST, publish, a deliver span from each gateway', async () => {
    const alice = gatewayA.player('Alice');
    const onA = await gatewayA.connect(gatewayA.headers(gatewayA.player(), key, CH));
    const onB = await gatewayB.connect(gatewayB.headers(gatewayB.player(), key, CH));

    const { spans, seq } = await postTraced({ type: 'chat', message: 'traced hello' }, ingress.headers(alice, key, CH));
    const a = await onA.nextPair();
    expect(a.data.message).toBe('traced hello');
    expect((await onB.nextPair()).id).toBe(a.id);

    const post = spans.find((s) => s.name === 'POST /')!;
    expect(post).toMatchObject({ service: 'ingress', kind: SERVER, parentSpanId: '' });
    expect(post.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/', 'http.response.status_code': 200, 'relay.entries': 1, 'relay.channel': CH });
    const publish = spans.find((s) => s.name === 'publish')!;
    expect(publish).toMatchObject({ service: 'ingress', kind: PRODUCER, parentSpanId: post.spanId });
    expect(publish.attributes).toMatchObject({ 'relay.sequence': a.id, 'relay.type': 'chat', 'messaging.system': 'nats' });
    expect(seq).toBe(a.id);

    const delivered = spans.filter((s) => s.name === 'deliver');
    expect(delivered.map((s) => s.service).sort()).toEqual(['gateway-a', 'gateway-b']);
    for (const d of delivered) {
      expect(d).toMatchObject({ kind: CONSUMER, parentSpanId: publish.spanId });
      expect(d.attributes).toMatchObject({
        'relay.sequence': a.id,
        'relay.channel': CH,
        'relay.streams.heard': 1,
        'relay.streams.filtered': 0,
        'relay.streams.coalesced': 0,
        'relay.streams.dropped_slow': 0,
      });
    }
    // Nothing about the sender or its credentials rides on a span.
    const text = JSON.stringify(spans);
    expect(text).not.toContain(alice.uuid);
    expect(text).not.toContain(key.clientSecret);
    onA.close();
    onB.close();
  });

  it('a direct message: the gateway whose stream the rules keep it from counts it filtered, the addressee’s heard', async () => {
    const bob = gatewayA.player('Bob');
    const carol = gatewayB.player('Carol');
    const onA = await gatewayA.connect(gatewayA.headers(bob, key, CH));
    const onB = await gatewayB.connect(gatewayB.headers(carol, key, CH));
    const { spans } = await postTraced({ type: 'message', to: bob.uuid, message: 'psst' }, ingress.headers(gatewayA.player(), key, CH));
    expect((await onA.nextPair()).data.message).toBe('psst');
    const byService = Object.fromEntries(spans.filter((s) => s.name === 'deliver').map((s) => [s.service, s.attributes]));
    expect(byService['gateway-a']).toMatchObject({ 'relay.streams.heard': 1, 'relay.streams.filtered': 0 });
    expect(byService['gateway-b']).toMatchObject({ 'relay.streams.heard': 0, 'relay.streams.filtered': 1 });
    onA.close();
    onB.close();
  });

  it('a resume read from the log is a replay span linked to the trace of each entry it sent again', async () => {
    const ch = 'resume-traced.example.net';
    const onA = await gatewayA.connect(gatewayA.headers(gatewayA.player(), key, ch));
    const one = await postTraced({ type: 'chat', message: 'one' }, ingress.headers(gatewayA.player(), key, ch), 1);
    const two = await postTraced({ type: 'chat', message: 'two' }, ingress.headers(gatewayA.player(), key, ch), 1);
    const publishOf = (t: { spans: ReceivedSpan[] }): ReceivedSpan => t.spans.find((s) => s.name === 'publish')!;

    // Gateway B has heard nothing of this channel: a resume from before both is read from the log.
    const before = receiver.spans.length;
    const resumed = await gatewayB.connect({ ...gatewayB.headers(gatewayB.player(), key, ch), 'last-event-id': String(one.seq - 1) });
    expect((await resumed.nextPair()).id).toBe(one.seq);
    expect((await resumed.nextPair()).id).toBe(two.seq);
    const replay = (await receiver.until((spans) => spans.slice(before).some((s) => s.name === 'replay'))).slice(before).find((s) => s.name === 'replay')!;
    expect(replay.service).toBe('gateway-b');
    expect(replay.attributes).toMatchObject({ 'relay.resume.answered': 'log', 'relay.replay.frames': 2, 'relay.resume.last_event_id': one.seq - 1, 'relay.channel': ch });
    expect(replay.links).toEqual([
      { traceId: publishOf(one).traceId, spanId: publishOf(one).spanId },
      { traceId: publishOf(two).traceId, spanId: publishOf(two).spanId },
    ]);
    onA.close();
    resumed.close();
  });
});

describe('relay trace <seq>', () => {
  it('prints the trace id of a traced entry, the one its spans carry', async () => {
    const { spans, seq } = await postTraced({ type: 'chat', message: 'find me' }, ingress.headers(gatewayA.player(), key, 'cli-trace.example.net'), 0);
    const r = await runCli(['trace', String(seq)], { NATS_URL: nats.url });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`#${seq} (cli-trace.example.net) trace ${spans[0]!.traceId}`);
    const json = await runCli(['trace', String(seq), '--json'], { NATS_URL: nats.url });
    expect(JSON.parse(json.stdout)).toEqual({ seq, channel: 'cli-trace.example.net', traceId: spans[0]!.traceId, sampled: true });
  });

  it('says an entry stored with tracing off was not traced (no traceparent was written)', async () => {
    const s = await gatewayA.connect(gatewayA.headers(gatewayA.player(), key, 'untraced.example.net'));
    expect((await untraced.post({ type: 'chat', message: 'dark' }, untraced.headers(gatewayA.player(), key, 'untraced.example.net'))).status).toBe(200);
    const { id } = await s.nextPair();
    const r = await runCli(['trace', String(id)], { NATS_URL: nats.url });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`#${id} (untraced.example.net) was not traced: it was stored while tracing was off.`);
    s.close();
  });

  it('refuses a sequence that is not stored (exit 1) or not a number (exit 2)', async () => {
    const missing = await runCli(['trace', '999999'], { NATS_URL: nats.url });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No entry #999999 is stored');
    const bad = await runCli(['trace', 'abc'], { NATS_URL: nats.url });
    expect(bad.code).toBe(2);
  });
});

describe('tracing settings', () => {
  it('is off unless an OTLP endpoint is set, and OTEL_SDK_DISABLED=true turns it off again', () => {
    expect(loadConfig('ingress', {}).tracing.enabled).toBe(false);
    const on = loadConfig('gateway', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%3Db' }).tracing;
    expect(on).toMatchObject({ enabled: true, url: 'http://collector:4318/v1/traces', headers: { 'x-api-key': 'a=b' }, serviceName: 'relay-gateway', sampler: 'parentbased_traceidratio', ratio: 1 });
    expect(loadConfig('ingress', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/traces', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other' }).tracing.url).toBe('http://c/traces');
    expect(loadConfig('ingress', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_SDK_DISABLED: 'true' }).tracing.enabled).toBe(false);
  });
});
