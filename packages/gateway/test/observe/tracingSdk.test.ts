import { tracingSettings } from '../../src/observe/tracingSdk.js';
import { tracingActive } from '../../src/observe/tracing.js';

describe('tracingSettings: the telemetry block over the standard OTEL_* variables', () => {
  test('is off by default: no block, no variable', () => {
    expect(tracingSettings(undefined, {})).toBeUndefined();
    expect(tracingActive()).toBe(false);
  });

  test('is on with OTEL_TRACES_EXPORTER=otlp (in a list too), the endpoint left to the exporter', () => {
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ serviceName: 'toolpin' });
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: ' console , OTLP' })).toEqual({
      serviceName: 'toolpin',
    });
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: 'console' })).toBeUndefined();
  });

  test('takes OTEL_SERVICE_NAME, unless the block names the service', () => {
    const env = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'edge-gateway' };
    expect(tracingSettings(undefined, env)).toEqual({ serviceName: 'edge-gateway' });
    expect(tracingSettings({ serviceName: 'from-file' }, env)).toEqual({ serviceName: 'from-file' });
  });

  test('lets the block win key by key: traces none turns off what the variables turn on, and back', () => {
    expect(tracingSettings({ traces: 'none' }, { OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
    expect(
      tracingSettings(
        { traces: 'otlp', endpoint: 'http://collector:4318/v1/traces' },
        { OTEL_TRACES_EXPORTER: 'none' },
      ),
    ).toEqual({ url: 'http://collector:4318/v1/traces', serviceName: 'toolpin' });
  });

  test('is off whenever OTEL_SDK_DISABLED=true', () => {
    expect(tracingSettings({ traces: 'otlp' }, { OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingSettings({ traces: 'otlp' }, { OTEL_SDK_DISABLED: 'false' })).toEqual({
      serviceName: 'toolpin',
    });
  });
});
