const base = process.argv[2].split(',');
const extra = process.argv.slice(3);
for (const b of base) if (b) await import(b);
const t0 = process.cpuUsage();
for (const e of extra) await import(e);
const u = process.cpuUsage(t0);
console.log(extra.join(' ').slice(0,150), ((u.user + u.system) / 1000).toFixed(0), 'ms');
