import { envKey } from './env-key.ts';
import type { RawSettings } from './ini.ts';

/**
 * The settings document of GET /api/admin/settings, redacted the way current Grafana does it
 * (`setting.RedactedValue` / `RedactedURL`): patterns are matched against the GF_SECTION_KEY form,
 * and everything else goes through a URL round-trip that hides userinfo passwords.
 */

export const REDACTED_PASSWORD = '*********';
export const REDACTED_URL_PASSWORD = 'xxxxx';

/** Go regexps used with `regexp.MatchString`: unanchored ones match anywhere in the key. */
const SENSITIVE_KEY_PATTERNS: readonly RegExp[] = [
  /PASSWORD/, /SECRET/, /PROVIDER_CONFIG/, /PRIVATE_KEY/, /SECRET_KEY/, /CERTIFICATE/, /ACCOUNT_KEY/,
  /ENCRYPTION_KEY/, /VAULT_TOKEN/, /CLIENT_SECRET/, /ENTERPRISE_LICENSE/, /API_DB_PASS/,
  // Keys always start with GF_, so ^TOKEN$ never matches; kept to mirror the upstream list.
  /^TOKEN$/, /ID_FORWARDING_TOKEN$/, /AUTHENTICATION_TOKEN$/, /AUTH_TOKEN$/, /RENDERER_TOKEN$/,
  /API_TOKEN$/, /WEBHOOK_TOKEN$/, /INSTALL_TOKEN$/,
];

/** Keys whose values are shown as-is, skipping even URL redaction. */
const PASSTHROUGH_KEY_PARTS: readonly string[] = ['RUDDERSTACK', 'APPLICATION_INSIGHTS', 'SENTRY'];

/** `gfKey` is the `GF_SECTION_KEY` form of the setting (see `envKey`). */
export function redactedValue(gfKey: string, value: string): string {
  if (value === '') return '';
  const key = gfKey.toUpperCase();
  if (SENSITIVE_KEY_PATTERNS.some((pattern) => pattern.test(key))) return REDACTED_PASSWORD;
  if (PASSTHROUGH_KEY_PARTS.some((part) => key.includes(part))) return value;
  return redactedUrlList(value) ?? value;
}

/** Every section of the effective ini (DEFAULT included, file order) with every value redacted. */
export function settingsBag(settings: { raw: RawSettings }): Record<string, Record<string, string>> {
  return Object.fromEntries(settings.raw.map(([section, entries]) => [
    section,
    Object.fromEntries(entries.map(([key, value]) => [key, redactedValue(envKey(section, key), value)])),
  ]));
}

const TEMPORARY_SCHEME = 'http://';

/**
 * A value may be a list of URLs. Each chunk is parsed as a URL (with a temporary `http://` when it
 * has no `://`) and re-serialised with any userinfo password replaced. Returns null when a chunk
 * does not parse, in which case the caller shows the value unchanged.
 */
function redactedUrlList(value: string): string | null {
  const chunks: string[] = [];
  for (const chunk of splitList(value)) {
    const temporary = !chunk.includes('://');
    const redacted = redactedUrl(temporary ? TEMPORARY_SCHEME + chunk : chunk);
    if (redacted === null) return null;
    chunks.push(temporary ? redacted.replace(TEMPORARY_SCHEME, '') : redacted);
  }
  return chunks.join(value.includes(',') ? ',' : ' ');
}

/**
 * Grafana's `util.SplitString`: a JSON array of strings when the value starts with `[` (anything
 * else starting with `[` yields no chunks, so such a value is shown empty, as Grafana does),
 * otherwise the words between commas and whitespace.
 */
function splitList(value: string): string[] {
  if (value.trim().startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed) && parsed.every((item) => item === null || typeof item === 'string')) {
        return parsed.map((item: string | null) => item ?? '');
      }
    } catch {
      // fall through: Go's json.Unmarshal error gives an empty list
    }
    return [];
  }
  return value.replaceAll(',', ' ').split(/\s+/).filter(Boolean);
}

// ---------------------------------------------------------------------------------------------
// A faithful-enough model of Go's net/url `Parse` + `URL.Redacted()` + `String()`: the same inputs
// fail to parse, the same password is hidden, and the rest is re-serialised as Go would (mostly
// verbatim). WHATWG `URL` is not usable here: it lower-cases hosts, adds `/` paths and rejects
// inputs Go accepts, which would alter non-secret values in the settings document.

type Mode = 'host' | 'userinfo' | 'path' | 'fragment';

function isAlnum(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** Go's `shouldEscape` for the modes used here. */
function shouldEscape(c: number, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  const ch = String.fromCharCode(c);
  if (mode === 'host' && `!$&'()*+,;=:[]<>"`.includes(ch)) return false;
  if ('-_.~'.includes(ch)) return false;
  if ('$&+,/:;=?@'.includes(ch)) {
    if (mode === 'path') return ch === '?';
    if (mode === 'userinfo') return '@/?:'.includes(ch);
    if (mode === 'fragment') return false;
  }
  if (mode === 'fragment' && '!()*'.includes(ch)) return false;
  return true;
}

/** Go's `unescape`: decodes %XX; null for a malformed escape or, in hosts, a forbidden character. */
function unescape(text: string, mode: Mode): Uint8Array | null {
  const bytes = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x25 /* % */) {
      if (i + 2 >= bytes.length || !isHex(bytes[i + 1]) || !isHex(bytes[i + 2])) return null;
      const decoded = parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
      // Hosts may only %-encode non-ASCII bytes, and "%25" (a zone separator).
      if (mode === 'host' && decoded < 0x80 && decoded !== 0x25) return null;
      out.push(decoded);
      i += 2;
    } else {
      if (mode === 'host' && c < 0x80 && shouldEscape(c, mode)) return null;
      out.push(c);
    }
  }
  return Uint8Array.from(out);
}

function escape(bytes: Uint8Array, mode: Mode): string {
  let out = '';
  for (const c of bytes) {
    out += shouldEscape(c, mode) ? `%${c.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(c);
  }
  return out;
}

/** Go's `validEncoded`: whether a raw path/fragment can be written back as it was. */
function validEncoded(text: string, mode: Mode): boolean {
  for (const c of Buffer.from(text, 'utf8')) {
    if (`!$&'()*+,;=:@[]%`.includes(String.fromCharCode(c))) continue;
    if (shouldEscape(c, mode)) return false;
  }
  return true;
}

/** The raw form when it is validly encoded, else the decoded bytes escaped again (`EscapedPath`). */
function reEscaped(raw: string, decoded: Uint8Array, mode: Mode): string {
  if (validEncoded(raw, mode)) return raw;
  if (mode === 'path' && raw === '*') return '*';
  return escape(decoded, mode);
}

/** Go's `getScheme`; null is its "missing protocol scheme" error, an empty scheme means none. */
function splitScheme(raw: string): { scheme: string; rest: string } | null {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) continue;
    if ((c >= 0x30 && c <= 0x39) || raw[i] === '+' || raw[i] === '-' || raw[i] === '.') {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (raw[i] === ':') return i === 0 ? null : { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

function validPort(colonPort: string): boolean {
  return colonPort === '' || /^:\d*$/.test(colonPort);
}

/** Go's `parseHost`: decoded host bytes, or null. */
function parseHost(host: string): Uint8Array | null {
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0 || !validPort(host.slice(end + 1))) return null;
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && !validPort(host.slice(colon))) return null;
  }
  return unescape(host, 'host');
}

/** Go's `validUserinfo`. */
function validUserinfo(userinfo: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo);
}

/** Parses `raw` as Go would and serialises `Redacted()`; null when Go's `url.Parse` fails. */
function redactedUrl(raw: string): string | null {
  if (/[\x00-\x1f\x7f]/.test(raw)) return null;

  const hash = raw.indexOf('#');
  const rawFragment = hash < 0 ? '' : raw.slice(hash + 1);
  const fragment = unescape(rawFragment, 'fragment');
  if (!fragment) return null;

  const split = splitScheme(hash < 0 ? raw : raw.slice(0, hash));
  if (!split) return null;
  const scheme = split.scheme.toLowerCase();
  let rest = split.rest;

  let query: string | null = null;
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    query = '';
    rest = rest.slice(0, -1);
  } else if (rest.includes('?')) {
    query = rest.slice(rest.indexOf('?') + 1);
    rest = rest.slice(0, rest.indexOf('?'));
  }
  const tail = (query !== null ? `?${query}` : '') + (fragment.length > 0 ? `#${reEscaped(rawFragment, fragment, 'fragment')}` : '');

  if (!rest.startsWith('/')) {
    if (scheme) return `${scheme}:${rest}${tail}`; // opaque: no authority, nothing to redact
    if (rest.split('/')[0].includes(':')) return null; // "first path segment in URL cannot contain colon"
  }

  let userinfo: string | null = null;
  let host: Uint8Array = new Uint8Array();
  let omitHost = false;
  if (rest.startsWith('//') && (scheme !== '' || !rest.startsWith('///'))) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    const parsedHost = parseHost(authority.slice(at + 1));
    if (!parsedHost) return null;
    host = parsedHost;
    if (at >= 0) {
      userinfo = redactedUserinfo(authority.slice(0, at));
      if (userinfo === null) return null;
    }
  } else if (scheme !== '' && rest.startsWith('/')) {
    omitHost = true;
  }

  const decodedPath = unescape(rest, 'path');
  if (!decodedPath) return null;
  const path = reEscaped(rest, decodedPath, 'path');

  let out = scheme ? `${scheme}:` : '';
  if ((scheme || host.length > 0 || userinfo !== null) && !(omitHost && host.length === 0 && userinfo === null)) {
    if (host.length > 0 || rest !== '' || userinfo !== null) out += '//';
    if (userinfo !== null) out += `${userinfo}@`;
    out += escape(host, 'host');
  }
  if (path !== '' && !path.startsWith('/') && host.length > 0) out += '/';
  if (out === '' && path.split('/')[0].includes(':')) out += './';
  return out + path + tail;
}

/** Userinfo as Go writes it back after `Redacted()`: the user name kept, a password (even empty) hidden. */
function redactedUserinfo(userinfo: string): string | null {
  if (!validUserinfo(userinfo)) return null;
  const colon = userinfo.indexOf(':');
  const user = unescape(colon < 0 ? userinfo : userinfo.slice(0, colon), 'userinfo');
  if (!user) return null;
  if (colon < 0) return escape(user, 'userinfo');
  if (!unescape(userinfo.slice(colon + 1), 'userinfo')) return null;
  return `${escape(user, 'userinfo')}:${REDACTED_URL_PASSWORD}`;
}
