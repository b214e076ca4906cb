//! The one place where HTTP connections are set up: the undici dispatcher of an endpoint (the
//! service, a webhook) with its proxy, TLS trust and timeouts, and the TLS material that the
//! OTLP exporters take too.
//!
//! Trust is Node's default store (the bundled roots, `NODE_EXTRA_CA_CERTS`, and the system
//! store when Node is started with `--use-system-ca`) plus the configured CA file. Passing a
//! `ca` to Node replaces its store, so the default one is listed with it.
import { readFileSync } from 'node:fs';
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import { ConfigError, describeError } from '../errors.js';

/** The TLS files of an endpoint as configured; `setting` names the block in errors (`api.`, `sinks.otel.tls.`). */
export interface TlsFiles {
  setting: string;
  caFile?: string | undefined;
  certFile?: string | undefined;
  keyFile?: string | undefined;
  /** Do not verify the peer's certificate. */
  insecure?: boolean | undefined;
}

/** Node's TLS options of an endpoint (connect, agent and gRPC credentials alike). */
export interface TlsOptions {
  ca?: string[];
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: boolean;
}

/**
 * Reads an endpoint's TLS files.
 * @throws ConfigError naming the setting of a file that cannot be read.
 */
export function readTls(files: TlsFiles): TlsOptions {
  const read = (key: 'ca_file' | 'cert_file' | 'key_file', path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      const problem = `${files.setting}${key}: cannot read ${path}: ${describeError(err)}`;
      throw new ConfigError(problem, [problem], { cause: err });
    }
  };
  const tls: TlsOptions = {};
  if (files.caFile !== undefined) tls.ca = [...process.getBuiltinModule('node:tls').getCACertificates('default'), read('ca_file', files.caFile).toString('utf8')];
  if (files.certFile !== undefined) tls.cert = read('cert_file', files.certFile);
  if (files.keyFile !== undefined) tls.key = read('key_file', files.keyFile);
  if (files.insecure) tls.rejectUnauthorized = false;
  return tls;
}

/** How an endpoint's connections are made. */
export interface EndpointOptions {
  /** The proxy to go through (net/proxy.ts), or none. */
  proxy: URL | undefined;
  tls: TlsOptions;
  connectMs: number;
  /** From sending a request to the end of the response's head. */
  headersMs: number;
  /** Longest silence while a body is received. */
  bodyMs: number;
  /** Keep-alive connections per origin. */
  connections: number;
}

/** The dispatcher of an endpoint: keep-alive connections, through its proxy when it has one. */
export function createDispatcher(options: EndpointOptions): Dispatcher {
  const common = { connections: options.connections, headersTimeout: options.headersMs, bodyTimeout: options.bodyMs, connectTimeout: options.connectMs };
  if (options.proxy === undefined) return new Agent({ ...common, connect: options.tls });
  // an https target is reached through a CONNECT tunnel, an http one by forwarding the request
  return new ProxyAgent({ ...common, uri: options.proxy.href, requestTls: options.tls, proxyTls: options.tls });
}
