// The settings of a mesh with regions (docs/REGIONS.md): which regions there are, which one this
// process is in, and where what is written once (keys) lives. All empty: the mesh has no regions.

import { Type } from '@sinclair/typebox';
import { MAX_ID_REGIONS, REGION_NAME_PATTERN } from '../../../schemas/event-id.js';
import { quoted } from './wording.js';
import type { ServiceKind } from './service-kinds.js';

/** JetStream's meta group needs a majority of regions: with two, losing either stops every region's setup and checks. */
export const MIN_REGIONS = 3;

export const RegionEnv = {
  REGIONS: Type.String({
    default: '',
    description: `Every region of the mesh, comma-separated, in a fixed order (${MIN_REGIONS} to ${MAX_ID_REGIONS}; each a NATS cluster of that name in one super-cluster). Empty: the mesh has no regions. Give every process the same list. relay setup lays the regions out; the ingress, the gateway and the admin service run in them, the all-in-one development relay does not (docs/REGIONS.md).`,
  }),
  REGION: Type.String({
    default: '',
    description: "This process's region, one of REGIONS: the ingress writes to its region's log, the gateway serves its region's players. Needed by the ingress and the gateway when REGIONS is set; the admin service and the CLI read and write as REGION_HOME wherever they run.",
  }),
  REGION_HOME: Type.String({
    default: '',
    description: 'The region that holds what is written once for the whole mesh: the keys, the operators\' bans and the audit trail (every other region keeps a copy of the keys). Empty: the first of REGIONS.',
  }),
};

/** A mesh with regions, as the services read it. */
export interface RegionSettings {
  /** This process's region; null only for the operator's CLI, which serves none. */
  here: string | null;
  all: readonly string[];
  home: string;
}

const NAME = new RegExp(REGION_NAME_PATTERN);
const names = (v: string): string[] => v.split(',').map((s) => s.trim()).filter((s) => s !== '');

/** Every problem of the region settings, one sentence each. `text` reads a variable as given ('' when unset). */
export function regionProblems(service: ServiceKind, text: (name: string) => string): string[] {
  const all = names(text('REGIONS'));
  const here = text('REGION').trim();
  const home = text('REGION_HOME').trim();
  const items = text('REGIONS').split(',').map((s) => s.trim());
  // "eu,,us" or "," is a mistake, not a mesh without regions: refused rather than read as fewer regions.
  if (text('REGIONS').trim() !== '' && items.some((r) => r === '')) return ['REGIONS has an empty item: name every region, separated by single commas (like eu,us,ap).'];
  if (all.length === 0) {
    return ['REGION', 'REGION_HOME'].filter((n) => text(n).trim() !== '').map((n) => `${n} is set, but REGIONS is not: name every region of the mesh in REGIONS, or leave ${n} empty.`);
  }
  const problems: string[] = [];
  const bad = all.filter((r) => !NAME.test(r));
  if (bad.length > 0) {
    const shown = bad.slice(0, 5).map((r) => quoted(r, 40)).join(', ') + (bad.length > 5 ? ` and ${bad.length - 5} more` : '');
    problems.push(`REGIONS has ${shown}: a region's name is a lower-case letter, then up to 15 lower-case letters, digits or "-".`);
  }
  const twice = all.filter((r, i) => all.indexOf(r) !== i);
  if (twice.length > 0) problems.push(`REGIONS names ${[...new Set(twice)].slice(0, 5).map((r) => quoted(r, 40)).join(', ')} more than once.`);
  if (all.length < MIN_REGIONS || all.length > MAX_ID_REGIONS) {
    problems.push(`REGIONS must name from ${MIN_REGIONS} to ${MAX_ID_REGIONS} regions (got ${all.length}): JetStream's meta group spans the regions and needs a majority of them.`);
  }
  // The operator's CLI (`relay setup`, keys, bans) serves no region; every service is in one.
  if (problems.length > 0) return problems;
  // Only once REGIONS itself is sound: its names are then safe to print.
  const list = all.join(', ');
  if (here === '' && (service === 'ingress' || service === 'gateway')) problems.push(`REGION must name this process's region, one of REGIONS (${list}).`);
  if (here !== '' && !all.includes(here)) problems.push(`REGION is ${quoted(here, 40)}, which is not one of REGIONS (${list}).`);
  if (home !== '' && !all.includes(home)) problems.push(`REGION_HOME is ${quoted(home, 40)}, which is not one of REGIONS (${list}).`);
  return problems;
}

/** The checked settings (regionProblems found none), or null without regions. */
export function regionSettings(env: { REGIONS: string; REGION: string; REGION_HOME: string }): RegionSettings | null {
  const all = names(env.REGIONS);
  if (all.length === 0) return null;
  const here = env.REGION.trim();
  const home = env.REGION_HOME.trim();
  return { here: here === '' ? null : here, all, home: home === '' ? all[0]! : home };
}

/**
 * The development all-in-one (`npm start`, `relay serve all`) runs every service on one NATS server,
 * which is no super-cluster: with regions each service runs in its region (docs/REGIONS.md).
 */
export const ALL_IN_ONE_HAS_NO_REGIONS =
  'REGIONS is set, and the all-in-one development relay (npm start, relay serve all) runs on one NATS server, which has no regions: run relay serve ingress, gateway and admin in each region instead (or npm run mesh -- --regions 3 for three regions on this machine).';
