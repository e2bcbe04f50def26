import { GatewayMetrics, type MetricsSources } from '../../src/observe/metrics.js';

function sources(overrides: Partial<MetricsSources> = {}): MetricsSources {
  return {
    sessions: () => 0,
    streams: () => new Map(),
    pins: () => [],
    webhookQueues: () => new Map(),
    ...overrides,
  };
}

/** The value of one sample line of the exposition, e.g. `toolpin_calls_total{server="demo",...}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GatewayMetrics', () => {
  it('counts blocked and flagged calls by server and reason, allowed calls with reason none', async () => {
    const metrics = new GatewayMetrics(sources());
    const decision = {
      reason: 'tool_drifted' as const,
      server: 'demo',
      tool: 'echo',
      key: 'tool:echo',
      pinned: null,
      observed: null,
    };
    metrics.recordAlert({ event: 'call.blocked', server: 'demo', session: 's', id: 1, decision });
    metrics.recordAlert({ event: 'call.blocked', server: 'demo', session: 's', id: 2, decision });
    metrics.recordAlert({
      event: 'call.flagged',
      server: 'other',
      session: 's',
      id: 3,
      decision: { ...decision, reason: 'tool_not_pinned' },
    });
    metrics.recordAllowedCall('demo');
    const { body } = await metrics.render();
    expect(sample(body, 'toolpin_calls_total{server="demo",decision="blocked",reason="tool_drifted"}')).toBe(
      2,
    );
    expect(
      sample(body, 'toolpin_calls_total{server="other",decision="flagged",reason="tool_not_pinned"}'),
    ).toBe(1);
    expect(sample(body, 'toolpin_calls_total{server="demo",decision="allowed",reason="none"}')).toBe(1);
  });

  it('counts drift findings by kind and severity, and catalogs by result', async () => {
    const metrics = new GatewayMetrics(sources());
    metrics.recordAlert({
      event: 'catalog.drift',
      server: 'demo',
      session: 's',
      mode: 'enforce',
      drift: [
        {
          kind: 'changed',
          key: 'tool:echo',
          tool: 'echo',
          pinned: 'sha256:a',
          observed: 'sha256:b',
          severity: 'high',
        },
        { kind: 'added', key: 'tool:new', tool: 'new', pinned: null, observed: 'sha256:c', severity: 'high' },
        {
          kind: 'changed',
          key: 'tool:add',
          tool: 'add',
          pinned: 'sha256:d',
          observed: 'sha256:e',
          severity: 'low',
        },
      ],
    });
    metrics.recordAlert({
      event: 'catalog.verified',
      server: 'demo',
      session: 's',
      catalog: 'sha256:f',
      tools: 3,
    });
    const { body } = await metrics.render();
    expect(
      sample(
        body,
        'toolpin_drift_events_total{server="demo",kind="changed",severity="high",surface="tools"}',
      ),
    ).toBe(1);
    expect(
      sample(body, 'toolpin_drift_events_total{server="demo",kind="changed",severity="low",surface="tools"}'),
    ).toBe(1);
    expect(
      sample(body, 'toolpin_drift_events_total{server="demo",kind="added",severity="high",surface="tools"}'),
    ).toBe(1);
    expect(sample(body, 'toolpin_catalogs_total{server="demo",result="drift",surface="tools"}')).toBe(1);
    expect(sample(body, 'toolpin_catalogs_total{server="demo",result="verified",surface="tools"}')).toBe(1);
  });

  it('reads gauges from their sources at scrape time: sessions, streams, pin info, webhook queues', async () => {
    let sessions = 3;
    let pins = [{ server: 'demo', catalog: 'sha256:1111', mode: 'enforce' }];
    const metrics = new GatewayMetrics(
      sources({
        sessions: () => sessions,
        streams: () => new Map([['demo', 2]]),
        pins: () => pins,
        webhookQueues: () => new Map([['hooks.example', 4]]),
      }),
    );
    let { body } = await metrics.render();
    expect(sample(body, 'toolpin_active_sessions')).toBe(3);
    expect(sample(body, 'toolpin_sse_streams_open{server="demo"}')).toBe(2);
    expect(sample(body, 'toolpin_pin_info{server="demo",catalog="sha256:1111",mode="enforce"}')).toBe(1);
    expect(sample(body, 'toolpin_webhook_queue_depth{webhook="hooks.example"}')).toBe(4);
    // A reload: the old pin's series disappears instead of lingering beside the new one.
    sessions = 1;
    pins = [{ server: 'demo', catalog: 'sha256:2222', mode: 'enforce' }];
    ({ body } = await metrics.render());
    expect(sample(body, 'toolpin_active_sessions')).toBe(1);
    expect(
      sample(body, 'toolpin_pin_info{server="demo",catalog="sha256:1111",mode="enforce"}'),
    ).toBeUndefined();
    expect(sample(body, 'toolpin_pin_info{server="demo",catalog="sha256:2222",mode="enforce"}')).toBe(1);
  });

  it('observes upstream latency by server, via and status class; requests by method', async () => {
    const metrics = new GatewayMetrics(sources());
    metrics.recordUpstream('demo', { via: 'proxy', status: 200, seconds: 0.003 });
    metrics.recordUpstream('demo', { via: 'fetch', error: 'ECONNREFUSED', seconds: 0.001 });
    metrics.recordRequest('demo', 'tools/call');
    metrics.recordRequest('demo', 'tools/call');
    const { body, contentType } = await metrics.render();
    expect(contentType).toMatch(/^text\/plain/);
    expect(
      sample(body, 'toolpin_upstream_latency_seconds_count{server="demo",via="proxy",status="2xx"}'),
    ).toBe(1);
    expect(
      sample(
        body,
        'toolpin_upstream_latency_seconds_bucket{le="0.005",server="demo",via="proxy",status="2xx"}',
      ),
    ).toBe(1);
    expect(
      sample(body, 'toolpin_upstream_latency_seconds_count{server="demo",via="fetch",status="error"}'),
    ).toBe(1);
    expect(sample(body, 'toolpin_requests_total{server="demo",method="tools/call"}')).toBe(2);
  });

  it('labels methods outside the MCP specification as other, so clients cannot grow the registry', async () => {
    const metrics = new GatewayMetrics(sources());
    for (let i = 0; i < 50; i += 1) metrics.recordRequest('demo', `made/up/${i}`);
    metrics.recordRequest('demo', 'GET');
    const { body } = await metrics.render();
    expect(sample(body, 'toolpin_requests_total{server="demo",method="other"}')).toBe(50);
    expect(sample(body, 'toolpin_requests_total{server="demo",method="GET"}')).toBe(1);
    expect(body).not.toContain('made/up');
  });

  it('keeps each gateway in its own registry', async () => {
    const a = new GatewayMetrics(sources());
    const b = new GatewayMetrics(sources());
    a.recordRequest('demo', 'initialize');
    expect(sample((await a.render()).body, 'toolpin_requests_total{server="demo",method="initialize"}')).toBe(
      1,
    );
    expect(
      sample((await b.render()).body, 'toolpin_requests_total{server="demo",method="initialize"}'),
    ).toBeUndefined();
  });
});
