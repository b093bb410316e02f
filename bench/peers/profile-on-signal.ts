// Preloaded into the gateways when the scale scenario profiles its phases (BENCH_PROFILE=phases): the
// first SIGWINCH starts V8's CPU profiler, the next writes the profile to BENCH_PHASE_PROFILE (a
// file path) and stops it. So a profile covers one phase (at rest, delivering at some rate) and not
// the opens before it. Nothing in the relay knows about this.
import { Session } from 'node:inspector/promises';
import { renameSync, writeFileSync } from 'node:fs';

const file = process.env['BENCH_PHASE_PROFILE'];
if (file !== undefined) {
  const session = new Session();
  session.connect();
  let profiling = false;
  // Signals are handled one at a time; a toggle arriving while the previous one is still being
  // written waits for it.
  let busy: Promise<void> = Promise.resolve();
  const toggle = async (): Promise<void> => {
    if (!profiling) {
      await session.post('Profiler.enable');
      // 1 ms, V8's default is 1 ms too; said here so the figures' resolution is on record.
      await session.post('Profiler.setSamplingInterval', { interval: 1000 });
      await session.post('Profiler.start');
      profiling = true;
      return;
    }
    const { profile } = await session.post('Profiler.stop');
    profiling = false;
    // Written whole, then renamed: the bench waits for the file and must not read half of it.
    writeFileSync(`${file}.part`, JSON.stringify(profile));
    renameSync(`${file}.part`, file);
  };
  process.on('SIGWINCH', () => {
    busy = busy.then(toggle).catch((err: unknown) => {
      process.stderr.write(`phase profile: ${String(err)}\n`);
    });
  });
}
