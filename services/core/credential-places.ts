// Where a process reads the keys and bans and writes the bans it issues (docs/REGIONS.md, "Keys,
// bans and revocations"). Without regions: the one keys bucket and the one bans bucket. With
// regions: the keys live in the home region and each region's bans in it; a process reads each from
// the stream of its own region that holds it or its copy, so a region cut off from the others keeps
// enforcing what it last knew, and writes its bans to its region's bucket, so a ban never waits for
// another region. The operator's tools (the CLI, the admin service), which serve no region, read and
// write as the home region.

import type { RegionSettings } from './config/region-env.js';
import { bansBucket, BUCKET_KEYS, localStreamOf } from './subjects.js';

/** A bucket, and the stream of this process's region it is read from (absent: the bucket's own, from its leader). */
export interface BucketPlace {
  bucket: string;
  readFrom?: string;
}

export interface CredentialPlaces {
  keys: BucketPlace;
  /** Every bans bucket of the mesh; an account is banned if any of them says so. */
  bans: readonly BucketPlace[];
  /** Where the bans this process issues (an operator's, or a cracked client's) are written. */
  bansWritten: string;
}

export function credentialPlaces(regions: RegionSettings | null): CredentialPlaces {
  if (regions === null) return { keys: { bucket: BUCKET_KEYS }, bans: [{ bucket: bansBucket(null) }], bansWritten: bansBucket(null) };
  if (regions.here === null) {
    // The operator's tools run anywhere: a direct get of a bucket kept in the home region may be
    // answered by a nearer region's copy of it (nats-server makes copies answer for their origin),
    // which lags. So those buckets are read from their leaders; the home region's copies of the
    // others' bans are streams of their own, answered only by themselves.
    const home = regions.home;
    const place = (bucket: string, origin: string): BucketPlace => (origin === home ? { bucket } : { bucket, readFrom: localStreamOf(bucket, origin, home) });
    return { keys: place(BUCKET_KEYS, home), bans: regions.all.map((r) => place(bansBucket(r), r)), bansWritten: bansBucket(home) };
  }
  const at = regions.here;
  return {
    keys: { bucket: BUCKET_KEYS, readFrom: localStreamOf(BUCKET_KEYS, regions.home, at) },
    bans: regions.all.map((r) => ({ bucket: bansBucket(r), readFrom: localStreamOf(bansBucket(r), r, at) })),
    bansWritten: bansBucket(at),
  };
}
