import { describe, expect, it } from '@jest/globals';
import { originForm, pathOf } from '../../src/http/request-target.ts';

describe('originForm', () => {
  it.each([
    // Origin form: unchanged, whatever it contains.
    ['/api/health', '/api/health'],
    ['/api/datasources?query=http://x/y', '/api/datasources?query=http://x/y'],
    ['//api/health', '//api/health'],
    ['/', '/'],
    // Absolute form: scheme and authority (userinfo, host, port) dropped, path and query kept verbatim.
    ['http://127.0.0.1:3000/api/health', '/api/health'],
    ['https://dashgate.example/api/datasources/name/a%2Fb?x=1', '/api/datasources/name/a%2Fb?x=1'],
    ['HTTP://Other-Org.Example:80/api/org', '/api/org'],
    ['http://user:pw@[::1]:8080/api/datasources/proxy/uid/abc/q?u=http://z/', '/api/datasources/proxy/uid/abc/q?u=http://z/'],
    ['http://host/api/datasources/proxy/1/a/../b', '/api/datasources/proxy/1/a/../b'],
    ['http://host//api/health', '//api/health'],
    // An empty path is `/`.
    ['http://host', '/'],
    ['http://host:3000?x=1', '/?x=1'],
    // Not the absolute form of anything routable: left for the router to refuse.
    ['*', '*'],
    ['example.com:443', 'example.com:443'],
    ['http:/api/health', 'http:/api/health'],
    ['api/health', 'api/health'],
    ['1http://host/api/health', '1http://host/api/health'],
  ])('%s -> %s', (target, expected) => {
    expect(originForm(target)).toBe(expected);
  });
});

describe('pathOf', () => {
  it.each([
    ['/api/health', '/api/health'],
    ['/api/datasources?query=a?b', '/api/datasources'],
    ['/?x=1', '/'],
    ['/a%3Fb?c', '/a%3Fb'],
  ])('%s -> %s', (target, expected) => {
    expect(pathOf(target)).toBe(expected);
  });
});
