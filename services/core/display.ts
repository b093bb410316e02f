// Showing text that came from elsewhere (clients, operators, the environment) to a person: URLs
// lose their credentials before they are printed or logged.

const SCHEME = /^\s*[a-z][a-z0-9+.-]*:\/\//i;

/**
 * A URL, or a comma-separated list of them (NATS_URL), with any userinfo (user:password@ or
 * token@) written ***@. The last "@" of each URL ends the userinfo: a careless password may hold
 * an unencoded "@" or "/", and showing too little of a URL is better than showing a secret.
 */
export function maskUrlCredentials(text: string): string {
  return text
    .split(',')
    .map((url) => {
      const at = url.lastIndexOf('@');
      if (at === -1) return url;
      const start = SCHEME.exec(url)?.[0].length ?? url.length - url.trimStart().length;
      return at < start ? url : `${url.slice(0, start)}***${url.slice(at)}`;
    })
    .join(',');
}
