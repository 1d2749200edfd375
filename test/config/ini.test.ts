import { DEFAULT_SECTION, parseIni } from '../../src/config/ini.ts';

const asObject = (text: string) =>
  Object.fromEntries([...parseIni(text, 'test.ini')].map(([name, entries]) => [name, Object.fromEntries(entries)]));

describe('parseIni', () => {
  it('puts keys before the first header in DEFAULT, which always comes first', () => {
    const sections = parseIni('app_mode = production\n[server]\nhttp_port = 3000\n', 'a.ini');
    expect([...sections.keys()]).toEqual([DEFAULT_SECTION, 'server']);
    expect(sections.get('DEFAULT')!.get('app_mode')).toBe('production');
    expect([...parseIni('[x]\na=1', 'b.ini').keys()]).toEqual(['DEFAULT', 'x']);
  });

  it('keeps section and key insertion order; a repeated key keeps its first place with the last value', () => {
    const sections = parseIni('[b]\nz=1\na=2\nz=3\n[a]\nk=v\n[b]\nm=4\n', 'o.ini');
    expect([...sections.keys()]).toEqual(['DEFAULT', 'b', 'a']);
    expect([...sections.get('b')!]).toEqual([['z', '3'], ['a', '2'], ['m', '4']]);
  });

  it('skips blank lines and full-line ; and # comments, and keeps # and ; inside values', () => {
    expect(asObject('; comment\n  # indented comment\n\n[s]\n;k = hidden\npassword = a#b;c\n')).toEqual({
      DEFAULT: {},
      s: { password: 'a#b;c' },
    });
  });

  it('trims keys and values, keeps dotted/dashed section names, allows empty values and "=" in values', () => {
    expect(asObject('[auth.generic_oauth]\n  client_id   =   abc  \nhttp_addr =\nurl = a=b=c\n[ my-sec ]\nx=1')).toEqual({
      DEFAULT: {},
      'auth.generic_oauth': { client_id: 'abc', http_addr: '', url: 'a=b=c' },
      'my-sec': { x: '1' },
    });
  });

  it('strips surrounding double and triple quotes only', () => {
    expect(asObject('a = "  spaced  "\nb = """x "quoted" y"""\nc = "unbalanced\nd = ""\ne = say "hi"\nf = """"""')).toEqual({
      DEFAULT: { a: '  spaced  ', b: 'x "quoted" y', c: '"unbalanced', d: '', e: 'say "hi"', f: '' },
    });
  });

  it('accepts CRLF line endings and a byte-order mark', () => {
    expect(asObject('\uFEFFa = 1\r\n[s]\r\nb = 2\r\n')).toEqual({ DEFAULT: { a: '1' }, s: { b: '2' } });
  });

  it('names the file and line of a line that is neither a header nor a key', () => {
    expect(() => parseIni('[s]\na = 1\n\njust words\n', '/etc/custom.ini')).toThrow(/^\/etc\/custom\.ini:4: expected/);
    expect(() => parseIni('= value', 'x.ini')).toThrow('x.ini:1: missing key');
    expect(() => parseIni('a=1\n[]', 'x.ini')).toThrow('x.ini:2: empty section name');
    expect(() => parseIni('[unclosed', 'x.ini')).toThrow('x.ini:1:');
  });
});
