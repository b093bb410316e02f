// A NATS node's store on a disk of its own that the campaign can fill: a size-limited tmpfs mounted
// on the store directory (root only). Filling writes a file until the kernel says ENOSPC, so the
// node meets a full disk exactly as on a real one; emptying deletes the file.

import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const FILLER = 'chaos-filler.bin';
const CHUNK = Buffer.alloc(1024 * 1024, 0x5a);

export class StoreDisk {
  readonly dir: string;
  private filled = false;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Mounts a tmpfs of `bytes` on `dir`; null when this process may not mount (not root), and why. */
  static mount(dir: string, bytes: number): StoreDisk | string {
    mkdirSync(dir, { recursive: true });
    if (process.getuid?.() !== 0) return 'not running as root: no size-limited tmpfs for the store';
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    } catch (e) {
      return `mount -t tmpfs failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`;
    }
    return new StoreDisk(dir);
  }

  /** Writes until the disk is full; resolves with the bytes written. */
  fill(): number {
    const fd = openSync(join(this.dir, FILLER), 'a');
    let written = 0;
    this.filled = true;
    try {
      // Whole chunks, then ever smaller ones, until not even 512 bytes fit.
      for (let size = CHUNK.length; size >= 512; ) {
        try {
          written += writeSync(fd, CHUNK, 0, size);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
          size /= 2;
        }
      }
    } finally {
      closeSync(fd);
    }
    return written;
  }

  empty(): void {
    if (!this.filled) return;
    rmSync(join(this.dir, FILLER), { force: true });
    this.filled = false;
  }

  unmount(): void {
    this.empty();
    try {
      execFileSync('umount', ['-l', this.dir], { stdio: 'pipe' });
    } catch {
      // Already gone (a previous run's cleanup).
    }
  }
}
