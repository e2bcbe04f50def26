// Preloaded into toolpin by bench/allocations.ts (BENCH_CPU_PROFILE=<dir>): a V8 CPU profile of
// exactly the measured requests, without start-up and warm-up. The first SIGUSR2 starts it, the
// second writes <dir>/toolpin.<pid>.cpuprofile (summarize it with bench/profileSummary.ts).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROFILE;
const session = new Session();
let running = false;
process.on('SIGUSR2', () => {
  if (dir === undefined) return;
  if (!running) {
    running = true;
    session.connect();
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start')),
    );
    return;
  }
  running = false;
  session.post('Profiler.stop', (error, result) => {
    if (error === null)
      writeFileSync(join(dir, `toolpin.${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    session.disconnect();
  });
});
