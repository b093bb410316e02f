// Preloaded into the processes the memory scenario measures (node --expose-gc --import ...): on
// SIGUSR2 they collect garbage and write process.memoryUsage() to BENCH_MEMORY_FILE, so memory per
// idle stream is read without what opening them left behind. Nothing in the relay knows about this.
import { writeFileSync } from 'node:fs';

const gc = (globalThis as { gc?: () => void }).gc;
const file = process.env['BENCH_MEMORY_FILE'];
if (gc !== undefined) {
  process.on('SIGUSR2', () => {
    gc();
    if (file !== undefined) writeFileSync(file, JSON.stringify(process.memoryUsage()));
  });
}
