// How the profile summaries (bench/profileSummary.ts, bench/perfPair.ts) name where time goes.

/** Which package (or Node internals, or the gateway's own folder) a script URL belongs to. */
export function packageOf(url: string): string {
  if (url === '') return '(native/V8)';
  if (url.startsWith('node:')) return 'node:internal';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const dist = /packages\/([^/]+)\/dist\/([^/]+)\//.exec(url);
  return dist === null ? url : `@toolpin/${dist[1]} ${dist[2]}/`;
}

const NATIVE_IO =
  /^(writev|writeUtf8String|writeLatin1String|writeBuffer|writeAsciiString|writeUcs2String|readv?|close|shutdown|accept|connect)$/;

/** The category of a function at `url` (empty: native): where a proxy's CPU goes, coarsely. */
export function categoryOfFrame(url: string, functionName: string): string {
  if (url === '') return NATIVE_IO.test(functionName) ? 'native I/O (syscalls)' : 'native / V8 builtins';
  if (/^node:(_http|http|https|internal\/http)/.test(url)) return 'node http';
  if (/^node:internal\/streams|^node:stream/.test(url)) return 'node streams';
  if (/^node:(net|internal\/stream_base|internal\/net)/.test(url)) return 'node net';
  if (/^node:(internal\/)?(timers|process\/task_queues)/.test(url)) return 'node timers / ticks';
  if (url.startsWith('node:')) return 'node other';
  if (url.includes('/node_modules/')) return `dep ${packageOf(url)}`;
  return `toolpin ${packageOf(url)}`;
}
