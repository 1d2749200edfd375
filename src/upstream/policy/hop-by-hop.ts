/**
 * Hop-by-hop headers (RFC 9110 section 7.6.1, and the legacy `keep-alive` and `proxy-connection`):
 * they describe one connection, never the message, so they are never passed on either way and a
 * data source's configured headers may not set them. The one list every header rule of the upstream layer is built from.
 */
export const HOP_BY_HOP: readonly string[] = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];
