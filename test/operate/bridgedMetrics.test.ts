import { connectV1Client } from '../peers/index.js';
import { startGatewayHarness } from '../support/gatewayHarness.js';
import { fixtureCommand, listStdioCatalog, stdioPinFor } from '../transports/support.js';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics of a bridged (stdio) upstream', () => {
  it('counts its requests and allowed calls like a proxied one', async () => {
    const tools = await listStdioCatalog(fixtureCommand());
    const gateway = await startGatewayHarness([stdioPinFor('local', fixtureCommand(), tools)]);
    const client = await connectV1Client(`${gateway.url}/local/mcp`);
    try {
      await client.listTools();
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      expect(result.isError).toBeFalsy();
      const text = await (await fetch(`${gateway.running.adminUrl}/metrics`)).text();
      expect(sample(text, 'toolpin_requests_total{server="local",method="tools/call"}')).toBe(1);
      expect(sample(text, 'toolpin_requests_total{server="local",method="tools/list"}')).toBe(1);
      expect(sample(text, 'toolpin_calls_total{server="local",decision="allowed",reason="none"}')).toBe(1);
      expect(sample(text, 'toolpin_catalogs_total{server="local",result="verified",surface="tools"}')).toBe(
        1,
      );
    } finally {
      await client.close();
      await gateway.close();
    }
  }, 20_000);
});
