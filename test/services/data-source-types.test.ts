import { describe, expect, it } from '@jest/globals';
import { typeLogoUrl, typeName, UID_PATTERN } from '../../src/services/data-source-types.ts';

describe('data source types', () => {
  it.each([
    ['prometheus', 'Prometheus', 'public/app/plugins/datasource/prometheus/img/prometheus_logo.svg'],
    ['mssql', 'Microsoft SQL Server', 'public/app/plugins/datasource/mssql/img/sql_server_logo.svg'],
    ['testdata', 'TestData', 'public/app/plugins/datasource/testdata/img/testdata.svg'],
    ['my-plugin-datasource', 'my-plugin-datasource', 'public/img/icn-datasource.svg'],
    ['constructor', 'constructor', 'public/img/icn-datasource.svg'],
    ['Prometheus', 'Prometheus', 'public/img/icn-datasource.svg'],
  ])('%s is named %j with its logo', (type, name, logo) => {
    expect([typeName(type), typeLogoUrl(type)]).toEqual([name, logo]);
  });

  it.each([['', true], ['abc-DEF_123', true], ['a.b', false], ['a b', false], ['ü', false], ['a/b', false]])('uid %j allowed: %p', (uid, allowed) => {
    expect(UID_PATTERN.test(uid)).toBe(allowed);
  });
});
