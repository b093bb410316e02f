// Where a secret hides in text by its shape, whatever setting, header or request it came from: the
// names of headers and query parameters that carry one, and the parts of a URL that may (user info,
// those parameters, the fragment). One rule for everything the relay prints or logs: `relay config
// check`, the configuration's error sentences, the start-up and connection logs, logged requests.

/** What a masked part of a URL is written as. */
export const URL_MASK = '***';

/**
 * Header and query parameter names that carry a secret, by shape, whatever their prefix (a client
 * sends X-Hackware-Client-Secret whether or not the operator configured that prefix; a backend may
 * want ?api_key=, ?access_token=, ?X-Amz-Signature= or an Azure ?sig=). Biased toward hiding: a
 * lost value costs a little debugging, a shown secret costs a key. "sig" only as the end of a word,
 * or "design" and "signal" would go too.
 */
const SECRET_NAME = /secret|token|pass|auth|cookie|session|credential|signature|jwt|csrf|xsrf|key|sig(?:$|[-_.])/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** A comma that starts another URL of a list (NATS_URL): only there is a list split. */
const NEXT_URL = /,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i;
/** One name=value of a query; "," and ";" separate them too, as some servers read them. */
const PARAM = /(^|[&;,])([^=&;,]*)=([^&;,]*)/g;

/**
 * A URL, a comma-separated list of them, or a request target (/path?query), with every part that
 * may hold a secret written ***: the user info (user:password@ or token@), the values of query
 * parameters whose names look secret, and the fragment. Text that is no URL comes back unchanged.
 * Secrets in a path (a webhook's /services/T0/B0/XXXX) cannot be told from a path and are shown.
 */
export function maskUrls(text: string): string {
  return text.split(NEXT_URL).map(maskUrl).join(',');
}

/**
 * NATS_URL as the configuration holds it (split at every comma) shown masked. Masking each piece
 * alone showed the first part of a password holding a comma (`nats://cli:pa,ss@host` became
 * `nats://cli:pa, ***@host`): joined again, the list is split only where another URL begins.
 */
export function maskServerList(servers: readonly string[]): string {
  return maskUrls(servers.join(', '));
}

function maskUrl(url: string): string {
  const lead = url.slice(0, url.length - url.trimStart().length);
  const scheme = SCHEME.exec(url.trimStart())?.[0] ?? '';
  let rest = url.slice(lead.length + scheme.length);
  // The last "@" ends the user info: a careless password may hold an unencoded "@" or "/". Without
  // a scheme (NATS's user:pass@host:4222) only when no "/" comes first: a path may hold an "@".
  const at = rest.lastIndexOf('@');
  if (at !== -1 && (scheme !== '' || !rest.slice(0, at).includes('/'))) {
    // A "?" or "#" before it: a password holding one, or an "@" in the query; either way nothing
    // after the scheme can be told apart safely.
    if (/[?#]/.test(rest.slice(0, at))) return `${lead}${scheme}${URL_MASK}`;
    rest = URL_MASK + rest.slice(at);
  }
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    fragment = hash === rest.length - 1 ? '#' : `#${URL_MASK}`;
    rest = rest.slice(0, hash);
  }
  const q = rest.indexOf('?');
  if (q !== -1) rest = rest.slice(0, q + 1) + rest.slice(q + 1).replace(PARAM, maskParam);
  return `${lead}${scheme}${rest}${fragment}`;
}

function maskParam(param: string, separator: string, name: string, value: string): string {
  return value !== '' && isSecretName(decodeName(name)) ? `${separator}${name}=${URL_MASK}` : param;
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
