/**
 * The `Via` header of proxied requests (RFC 9110 section 7.6.3), used to refuse proxy loops: a data
 * source may point at a dashgate proxy URL, its own or one that leads back to it, and each hop
 * would call the next until a limit broke. Every proxied request gets the entry
 * `<version> <pseudonym>`; a request that already carries an entry with our pseudonym came
 * through this deployment's proxy before and is refused.
 *
 *   Via = #( received-protocol RWS received-by [ RWS comment ] )
 *   received-protocol = [ protocol-name "/" ] protocol-version   ("HTTP/" is omitted)
 *   received-by = pseudonym [ ":" port ] / uri-host ":" port
 */

/**
 * The received-by part of each member of a Via field, in order. Commas inside comments
 * (parentheses, which nest and may hold quoted pairs) do not separate members; empty members are
 * skipped, as list syntax allows them.
 */
export function viaReceivedBy(value: string): string[] {
  const members: string[] = [];
  let member = '';
  let depth = 0;
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    if (depth > 0 && char === '\\') {
      i++;
      continue;
    }
    if (char === '(') depth++;
    else if (char === ')' && depth > 0) depth--;
    else if (depth === 0) {
      if (char === ',') {
        members.push(member);
        member = '';
      } else member += char;
    }
  }
  members.push(member);
  const receivedBy: string[] = [];
  for (const text of members) {
    // What is left of a member without its comment: protocol and received-by, separated by whitespace.
    const [, by] = text.trim().split(/[ \t]+/);
    if (by) receivedBy.push(by);
  }
  return receivedBy;
}

/** Whether the request already went through a proxy calling itself `pseudonym` (case-insensitive). */
export function passedThrough(via: string | string[] | undefined, pseudonym: string): boolean {
  if (via === undefined) return false;
  const wanted = pseudonym.toLowerCase();
  for (const value of Array.isArray(via) ? via : [via]) {
    // Cheap test first: most requests never carry our name at all.
    if (!value.toLowerCase().includes(wanted)) continue;
    if (viaReceivedBy(value).some((by) => by.toLowerCase() === wanted)) return true;
  }
  return false;
}

/** The Via field to send upstream: the received entries, then ours for the hop we received. */
export function withVia(via: string | string[] | undefined, httpVersion: string, pseudonym: string): string {
  const ours = `${httpVersion} ${pseudonym}`;
  const received = Array.isArray(via) ? via.join(', ') : via;
  return received ? `${received}, ${ours}` : ours;
}
