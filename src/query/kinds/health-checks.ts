import type { HealthCheck } from './health.ts';
import { elasticsearchHealth } from './elasticsearch/health.ts';
import { graphiteHealth } from './graphite/health.ts';
import { influxDbHealth } from './influxdb/health.ts';
import { jaegerHealth } from './jaeger/health.ts';
import { lokiHealth } from './loki/health.ts';
import { prometheusHealth } from './prometheus/health.ts';
import { tempoHealth } from './tempo/health.ts';
import { testDataHealth } from './testdata/health.ts';
import { zipkinHealth } from './zipkin/health.ts';

/**
 * The health check of each kind by plugin type id: the query kinds' and those of the kinds only
 * checked here (Elasticsearch, Tempo, Jaeger, Zipkin). Kinds whose check needs more than HTTP
 * (SQL databases, cloud APIs) have none: they answer as the original does for a plugin without a
 * check, UNKNOWN "Health check not implemented".
 */
const CHECKS: Record<string, HealthCheck> = {
  prometheus: prometheusHealth,
  loki: lokiHealth,
  graphite: graphiteHealth,
  influxdb: influxDbHealth,
  elasticsearch: elasticsearchHealth,
  tempo: tempoHealth,
  jaeger: jaegerHealth,
  zipkin: zipkinHealth,
  testdata: testDataHealth,
  'grafana-testdata-datasource': testDataHealth,
};

/** The check of a kind, or null when the original has none reachable over HTTP. */
export function healthCheckFor(type: string): HealthCheck | null {
  return Object.hasOwn(CHECKS, type) ? CHECKS[type]! : null;
}

/** Whether a check answers without calling its data source (so needs no URL). */
export function callsNothing(check: HealthCheck): boolean {
  return check === testDataHealth;
}
