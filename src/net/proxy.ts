//! Which proxy the connections to one endpoint go through: the endpoint's `proxy:` setting,
//! else the environment (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`, the lower-case name first)
//! read by the rules of undici's `EnvHttpProxyAgent`. The choice is made once per endpoint and
//! shared by undici's dispatchers, the OTLP exporters' agents and the gRPC channel: undici does
//! not export its own, and the exporters' transports need it too.
import { ConfigError } from '../errors.js';
import { registerSecret } from '../telemetry/secrets.js';

/** An endpoint's `proxy:` setting: a proxy URL, `false` for `proxy: none`, `undefined` for the environment. */
export type ProxySetting = string | false | undefined;

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

/**
 * The proxy for `target`, or `undefined` to connect directly. `where` names the setting in
 * errors. A proxy's password is registered as a secret, so that no output shows it.
 * @throws ConfigError for a proxy that is not an http:// or https:// URL.
 */
export function proxyFor(target: URL, setting: ProxySetting, where: string, env: NodeJS.ProcessEnv = process.env): URL | undefined {
  if (setting === false) return undefined;
  const [name, raw] = setting !== undefined ? [where, setting] : (environmentProxy(target, env) ?? []);
  if (raw === undefined) return undefined;
  let proxy: URL | undefined;
  try {
    proxy = new URL(raw);
  } catch {
    // the value may hold credentials: it is not shown
  }
  if (proxy?.protocol !== 'http:' && proxy?.protocol !== 'https:') {
    throw new ConfigError(`${name}: the proxy must be an http:// or https:// URL such as http://proxy.example:3128`, [`${name}: not an http:// or https:// URL`]);
  }
  if (proxy.password) registerSecret(decodeURIComponent(proxy.password));
  return proxy;
}

/** The proxy's address without credentials, for logs and errors. */
export function proxyLabel(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`;
}

/** `[variable, value]` of the environment's proxy for `target`, unless NO_PROXY exempts it. */
function environmentProxy(target: URL, env: NodeJS.ProcessEnv): [string, string] | undefined {
  const named = (lower: string): [string, string] | undefined => {
    const name = env[lower] !== undefined ? lower : lower.toUpperCase();
    const value = env[name];
    return value ? [name, value] : undefined;
  };
  // an https target without an HTTPS proxy goes through the HTTP one, as with undici
  const found = (target.protocol === 'https:' ? named('https_proxy') : undefined) ?? named('http_proxy');
  return found && !exempt(target, env.no_proxy ?? env.NO_PROXY ?? '') ? found : undefined;
}

/**
 * Whether NO_PROXY exempts `target`: an entry is `*`, a host name (which also covers its
 * subdomains; a leading `.` or `*.` covers the subdomains only for `*.`), or an address, each
 * optionally with `:port`; entries are separated by commas or spaces.
 */
function exempt(target: URL, noProxy: string): boolean {
  const host = target.hostname.replace(/^\[(.+)\]$/, '$1').replace(/(.)\.$/, '$1').toLowerCase();
  const port = Number(target.port) || DEFAULT_PORTS[target.protocol] || 0;
  for (const entry of noProxy.split(/[,\s]/)) {
    if (!entry) continue;
    const bracketed = /^\[(.+)\]:(\d+)$/.exec(entry);
    const bare = entry.replace(/^\[(.+)\]$/, '$1');
    const withPort = bracketed ?? ((bare.match(/:/g) ?? []).length === 1 ? /^(.+):(\d+)$/.exec(bare) : null);
    const name = (withPort ? withPort[1]! : bare).replace(/^\*?\./, '').replace(/^(.+)\.$/, '$1').toLowerCase();
    const entryPort = withPort ? Number(withPort[2]) : 0;
    if (entryPort && entryPort !== port) continue;
    if (name === '*' || (!entry.startsWith('*') && host === name) || host.endsWith(`.${name}`)) return true;
  }
  return false;
}
