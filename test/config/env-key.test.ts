import { describe, expect, it } from '@jest/globals';
import { envKey, settingName } from '../../src/config/env-key.ts';

describe('envKey', () => {
  it.each([
    ['server', 'http_port', 'GF_SERVER_HTTP_PORT'],
    ['auth.generic_oauth', 'client_secret', 'GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET'],
    ['plugin.grafana-image-renderer', 'rendering_timeout', 'GF_PLUGIN_GRAFANA_IMAGE_RENDERER_RENDERING_TIMEOUT'],
    ['feature_toggles', 'a.b', 'GF_FEATURE_TOGGLES_A_B'],
    // The key keeps its dashes, as the original's EnvKey does.
    ['security', 'x-y', 'GF_SECURITY_X-Y'],
  ])('[%s] %s is %s', (section, key, name) => {
    expect(envKey(section, key)).toBe(name);
  });

  it('names a setting both ways', () => {
    expect(settingName('database', 'embedded_port')).toBe('[database] embedded_port / GF_DATABASE_EMBEDDED_PORT');
  });
});
