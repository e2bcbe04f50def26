const t0 = process.cpuUsage();
const spec = process.argv[2];
await import(spec);
const u = process.cpuUsage(t0);
console.log(spec, ((u.user + u.system) / 1000).toFixed(0), 'ms');
