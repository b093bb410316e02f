// What a service finds in NATS at start, against the layout (nats-layout.ts). Services never create
// or change a stream (that is `relay setup`, with the operator's credentials): a stream or bucket
// that is missing, or lacks what the service cannot work without, stops start-up with one sentence
// naming it; a limit that differs from one this process was given is a warning.

import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { copyShapeProblems, EVERY_STREAM, type StreamLimits, type StreamPlan } from './nats-layout.js';
import { LIMIT_NAMES, limitText } from './nats-limits-text.js';
import { FEED_REBUILD } from './bucket-rebuild.js';

export interface LayoutFindings {
  /** Each stops start-up. */
  problems: string[];
  warnings: string[];
  /** The streams found, by name. */
  found: Map<string, StreamInfo>;
}

const SETUP_HINT = 'run `relay setup` with the operator\'s NATS credentials (docs/OPERATIONS.md "Setting up NATS")';

/**
 * Reads each planned stream's information. `explicit` holds the environment variables this process
 * was given (not defaulted): only those are compared with the stream's limits.
 */
export async function checkNatsLayout(jsm: JetStreamManager, plans: StreamPlan[], explicit: ReadonlySet<string>): Promise<LayoutFindings> {
  const findings: LayoutFindings = { problems: [], warnings: [], found: new Map() };
  // Asked all at once: on a cluster just started each answer may wait for a leader.
  const infos = await Promise.all(
    plans.map((plan) =>
      jsm.streams.info(plan.stream).catch((e: unknown) => {
        if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound) return null;
        throw e;
      }),
    ),
  );
  for (const [i, plan] of plans.entries()) {
    const info = infos[i] ?? null;
    if (info === null) {
      findings.problems.push(`${capitalised(plan.label)} does not exist: ${SETUP_HINT}.`);
      continue;
    }
    findings.found.set(plan.stream, info);
    findings.problems.push(...shapeProblems(plan, info.config));
    // A region's stream elsewhere would make its writes wait for another region, silently.
    const region = plan.shape.placement?.cluster;
    if (region !== undefined && info.cluster?.name !== region) {
      findings.problems.push(`${capitalised(plan.label)} is in ${info.cluster?.name === undefined ? 'no NATS cluster' : `the NATS cluster ${JSON.stringify(info.cluster.name)}`}, not in region ${region}: move it there, or remove it and ${SETUP_HINT}.`);
    }
    findings.warnings.push(...limitWarnings(plan, info.config, explicit));
  }
  return findings;
}

/** What the services cannot work without. */
export function shapeProblems(plan: StreamPlan, c: StreamConfig): string[] {
  const name = capitalised(plan.label);
  const out: string[] = [];
  if (c.sealed) out.push(`${name} is sealed: nothing can be written to it; restore it from a backup (JetStream cannot unseal a stream).`);
  const missing = plan.shape.subjects.filter((s) => !(c.subjects ?? []).includes(s));
  if (missing.length > 0) out.push(`${name} does not take the subjects ${missing.join(', ')}: ${SETUP_HINT}.`);
  if (c.retention !== EVERY_STREAM.retention) out.push(`${name} keeps messages by ${c.retention}, not by limits (what the relay stores would be dropped): remove it and ${SETUP_HINT}.`);
  out.push(...copyShapeProblems(plan, c).map((problem) => `${name} ${problem}: remove it and ${SETUP_HINT}.`));
  if (c.allow_rollup_hdrs === true) out.push(`${name} allows roll-up headers, with which one publish on any of its subjects erases every other: ${SETUP_HINT}.`);
  if (c.max_msg_size !== undefined && c.max_msg_size > 0) out.push(`${name} refuses messages larger than ${c.max_msg_size} bytes: ${SETUP_HINT}.`);
  const r = plan.shape.republish;
  if (r !== undefined && c.republish?.headers_only === true) out.push(`${name} republishes headers only, so live frames would carry no payload: remove the stream and ${SETUP_HINT}.`);
  if (r !== undefined && plan.bucket !== undefined && (c.republish?.src !== r.src || c.republish.dest !== r.dest)) {
    out.push(`${name} has no change feed (${r.dest}), ${FEED_REBUILD}.`);
  } else if (r !== undefined && (c.republish?.src !== r.src || c.republish.dest !== r.dest)) {
    out.push(`${name} does not republish ${r.src} to ${r.dest}, which live delivery rides on, and JetStream cannot add that to an existing stream: remove the stream (its payloads go with it) and ${SETUP_HINT}.`);
  }
  if (plan.shape.allow_direct === true && c.allow_direct !== true) out.push(`${name} does not allow direct gets: ${SETUP_HINT}.`);
  if (plan.bucket !== undefined && c.max_msgs_per_subject === 0) out.push(`${name} keeps no history per key: ${SETUP_HINT}.`);
  return out;
}

function limitWarnings(plan: StreamPlan, c: StreamConfig, explicit: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [field, variable] of Object.entries(plan.sources) as Array<[keyof StreamLimits, string]>) {
    if (!explicit.has(variable) || (c[field] ?? 0) === plan.limits[field]) continue;
    out.push(
      `${variable} asks for ${LIMIT_NAMES[field]} ${limitText(field, plan.limits[field])}, but ${plan.label} has ${limitText(field, c[field] ?? 0)}: this process uses what the stream has; run \`relay setup\` with ${variable} to change it.`,
    );
  }
  return out;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
