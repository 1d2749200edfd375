import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { readDockerfile } from '../support/dockerfile.ts';

/**
 * docker-compose.yml as `docker compose up --scale dashgate=3` reads it (no Docker engine runs
 * here, so the file is checked rather than run; test/robustness/balancer.test.ts runs its balancer
 * config, and test/system/image-install.test.ts its image): replicas that can scale, a balancer
 * that finds them, and the figures that a restart with no failed request depends on, consistent.
 */
const root = new URL('../..', import.meta.url).pathname;
const compose = parse(readFileSync(`${root}docker-compose.yml`, 'utf8')) as {
  services: Record<string, Record<string, any>>;
  networks: Record<string, any>;
};
const haproxy = readFileSync(`${root}deploy/haproxy.cfg`, 'utf8');
const { dashgate, balancer, postgres } = compose.services as Record<string, Record<string, any>>;

/** A duration of the HAProxy config in ms (`1s`, `500ms`). */
const ms = (text: string) => (text.endsWith('ms') ? Number(text.slice(0, -2)) : Number(text.replace(/s$/, '')) * 1000);

describe('docker-compose.yml', () => {
  it('runs replicas of the built image: no host port, no source tree, no install at start', () => {
    expect(dashgate!.build).toBe('.');
    expect(dashgate!.ports).toBeUndefined();
    expect(dashgate!.volumes).toBeUndefined();
    expect(dashgate!.command).toBeUndefined();
    expect(dashgate!.container_name).toBeUndefined();
    expect(dashgate!.expose).toEqual(['3000']);
    expect(dashgate!.environment.GF_SERVER_HTTP_PORT).toBeUndefined();
    // The balancer alone closes idle connections (it may reuse one the instant an instance would).
    expect(dashgate!.environment.GF_SERVER_KEEP_ALIVE_TIMEOUT_SECONDS).toBe('0');
    // The image listens where the replicas are looked for, as the user the Dockerfile names.
    const runtime = readDockerfile(`${root}Dockerfile`).at(-1)!;
    expect(runtime.instructions.find((step) => step.keyword === 'EXPOSE')?.text).toBe('3000');
    expect(postgres!.image).toMatch(/^postgres:/);
    expect(dashgate!.environment).toMatchObject({ GF_DATABASE_TYPE: 'postgres', GF_DATABASE_HOST: 'postgres:5432' });
  });

  it('puts HAProxy in front with the committed config, finding every replica by the service name', () => {
    expect(balancer!.image).toMatch(/^haproxy:/);
    expect(balancer!.volumes).toEqual(['./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
    expect(balancer!.ports).toContain('3000:3000');
    // The config's defaults are compose's: the service's name and port, Docker's DNS.
    expect(haproxy).toContain('"${DASHGATE_LB_SERVERS-dashgate:3000}"');
    expect(haproxy).toContain('"${DASHGATE_LB_DNS-127.0.0.11:53}"');
    expect(haproxy).toContain('"${DASHGATE_LB_BIND-:3000}"');
    expect(haproxy).toMatch(/server-template dashgate \d+-\d+ .* check resolvers docker|default-server check .*resolvers docker/);
    expect(haproxy).toMatch(/http-check send meth GET uri \/api\/health /);
  });

  it('trusts the balancer, and only it, to name clients', () => {
    const address = balancer!.networks.default.ipv4_address as string;
    expect(dashgate!.environment.GF_SERVER_TRUSTED_PROXIES).toBe(address);
    expect(haproxy).toMatch(/^\s+option forwardfor$/m);
    const [pool] = compose.networks.default.ipam.config as Array<{ subnet: string; ip_range: string }>;
    const inRange = (ip: string, cidr: string) => {
      const [base, bits] = cidr.split('/');
      const n = (a: string) => a.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
      const size = 2 ** (32 - Number(bits));
      return Math.floor(n(ip) / size) === Math.floor(n(base!) / size);
    };
    expect(inRange(address, pool!.subnet)).toBe(true);
    // Outside the range Docker hands out, so no other container can take it.
    expect(inRange(address, pool!.ip_range)).toBe(false);
  });

  it('drains a stopping replica for longer than the balancer takes to mark it down, and lets it finish', () => {
    const server = /default-server (.*)$/m.exec(haproxy)![1]!;
    const param = (name: string) => new RegExp(`\\b${name} (\\S+)`).exec(server)![1]!;
    // A first failed check within `inter`, then `fall - 1` more `fastinter` apart; a draining
    // instance answers its checks at once, so a second of margin covers their own time.
    const markedDownWithin = ms(param('inter')) + (Number(param('fall')) - 1) * ms(param('fastinter'));
    const drain = Number(dashgate!.environment.GF_SERVER_SHUTDOWN_DRAIN_SECONDS) * 1000;
    expect(markedDownWithin).toBe(1_500);
    expect(drain).toBeGreaterThanOrEqual(markedDownWithin + 1_000);
    // Docker's SIGKILL waits for the drain and the default 30 s given to requests in flight.
    expect(Number.parseInt(dashgate!.stop_grace_period, 10) * 1000).toBeGreaterThanOrEqual(drain + 30_000);
  });
});
