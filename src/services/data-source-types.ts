/** The characters a data source uid may use (the original's `util.IsValidShortUID`). */
export const UID_PATTERN = /^[a-zA-Z0-9\-_]*$/;

/** Display names and logos of the built-in data source kinds, for `typeName` / `typeLogoUrl`. */
const KNOWN: Record<string, { name: string; logo: string }> = {
  graphite: { name: 'Graphite', logo: 'graphite/img/graphite_logo.png' },
  prometheus: { name: 'Prometheus', logo: 'prometheus/img/prometheus_logo.svg' },
  elasticsearch: { name: 'Elasticsearch', logo: 'elasticsearch/img/elasticsearch.svg' },
  cloudwatch: { name: 'CloudWatch', logo: 'cloudwatch/img/amazon-web-services.png' },
  influxdb: { name: 'InfluxDB', logo: 'influxdb/img/influxdb_logo.svg' },
  loki: { name: 'Loki', logo: 'loki/img/loki_icon.svg' },
  tempo: { name: 'Tempo', logo: 'tempo/img/tempo_logo.svg' },
  jaeger: { name: 'Jaeger', logo: 'jaeger/img/jaeger_logo.svg' },
  zipkin: { name: 'Zipkin', logo: 'zipkin/img/zipkin-logo.svg' },
  opentsdb: { name: 'OpenTSDB', logo: 'opentsdb/img/opentsdb_logo.png' },
  mysql: { name: 'MySQL', logo: 'mysql/img/mysql_logo.svg' },
  postgres: { name: 'PostgreSQL', logo: 'postgres/img/postgresql_logo.svg' },
  mssql: { name: 'Microsoft SQL Server', logo: 'mssql/img/sql_server_logo.svg' },
  alertmanager: { name: 'Alertmanager', logo: 'alertmanager/img/logo.svg' },
  testdata: { name: 'TestData', logo: 'testdata/img/testdata.svg' },
};

/** Own entries only: a type named `constructor` or `toString` is an unknown kind, not a property of every object. */
const knownType = (type: string) => (Object.hasOwn(KNOWN, type) ? KNOWN[type] : undefined);

export function typeName(type: string): string {
  return knownType(type)?.name ?? type;
}

export function typeLogoUrl(type: string): string {
  const known = knownType(type);
  return known ? `public/app/plugins/datasource/${known.logo}` : 'public/img/icn-datasource.svg';
}
