// Summarizes a V8 .cpuprofile (from `pnpm bench --cpu-prof`): self time by category (GC, native
// and I/O, node's HTTP, streams and the rest of node, toolpin, dependencies), by file, by function,
// and total time by function, heaviest first, as shares of the busy (non-idle) time.
// Usage: tsx bench/profileSummary.ts <file.cpuprofile> [top=30]
import { readFileSync } from 'node:fs';
import { categoryOfFrame, packageOf } from './profileNames.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: profileSummary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

function nameOf(node: ProfileNode): string {
  const frame = node.callFrame;
  const where =
    frame.url === ''
      ? ''
      : ` ${frame.url.replace(/^.*\/(node_modules|packages)\//, '$1/')}:${frame.lineNumber + 1}`;
  return `${frame.functionName || '(anonymous)'}${where}`;
}

/** The category a sample's function belongs to: where the proxy's CPU goes, coarsely. */
function categoryOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8 runtime (program)';
  return categoryOfFrame(url, functionName);
}

/** The script a frame belongs to, shortened. */
function fileOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  return url.replace(/^.*\/(node_modules|packages)\//, '$1/').replace(/^file:\/\//, '');
}

const selfByCategory = new Map<string, number>();
const selfByFile = new Map<string, number>();
const selfByFunction = new Map<string, number>();
const totalByFunction = new Map<string, number>();
const selfByPackage = new Map<string, number>();
let total = 0;
let idle = 0;
profile.samples.forEach((id, index) => {
  const node = byId.get(id);
  const micros = profile.timeDeltas[index] ?? 0;
  if (node === undefined) return;
  if (node.callFrame.functionName === '(idle)') {
    idle += micros;
    return;
  }
  total += micros;
  const category = categoryOf(node);
  selfByCategory.set(category, (selfByCategory.get(category) ?? 0) + micros);
  const file = fileOf(node);
  selfByFile.set(file, (selfByFile.get(file) ?? 0) + micros);
  const name = nameOf(node);
  selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + micros);
  // Inclusive time: each function on the sample's stack once (recursion counted once).
  const seen = new Set<string>();
  for (let at: number | undefined = node.id; at !== undefined; at = parentOf.get(at)) {
    const frameName = nameOf(byId.get(at) as ProfileNode);
    if (seen.has(frameName)) continue;
    seen.add(frameName);
    totalByFunction.set(frameName, (totalByFunction.get(frameName) ?? 0) + micros);
  }
  const pkg = packageOf(node.callFrame.url);
  selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + micros);
});

// A reader that stops early (| head) is not an error.
process.stdout.on('error', () => process.exit(0));
const print = (title: string, map: Map<string, number>, limit: number): void => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    process.stdout.write(
      `${((100 * micros) / total).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}\n`,
    );
  }
};
process.stdout.write(
  `${file}: ${(total / 1000).toFixed(0)} ms busy sampled (${(idle / 1000).toFixed(0)} ms idle left out)\n`,
);
print('self time by category', selfByCategory, 20);
print('self time by file', selfByFile, 20);
print('self time by package', selfByPackage, 20);
print('self time by function', selfByFunction, top);
print('total time by function (self + callees)', totalByFunction, top);
