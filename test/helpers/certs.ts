//! Test certificate authorities and server certificates for 127.0.0.1 and localhost, made
//! with the openssl CLI in a folder of the caller's.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether the openssl CLI is there (the tests that need certificates are skipped without it). */
export const HAS_OPENSSL = ((): boolean => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A certificate authority: its PEM file, and a server certificate it signs. */
export interface TestCa {
  /** The CA certificate's PEM file. */
  certFile: string;
  /** A server certificate and key for 127.0.0.1 and localhost, signed by this CA. */
  server: { cert: Buffer; key: Buffer };
}

/** Makes the CA `name` in `dir` and a server certificate signed by it. */
export function makeCa(dir: string, name: string): TestCa {
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const caKey = join(dir, `${name}-ca.key`);
  const certFile = join(dir, `${name}-ca.pem`);
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', certFile, '-days', '2', '-subj', `/CN=mls test CA ${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  const key = join(dir, `${name}-server.key`);
  const csr = join(dir, `${name}-server.csr`);
  const cert = join(dir, `${name}-server.pem`);
  const ext = join(dir, `${name}-server.ext`);
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=127.0.0.1');
  run('x509', '-req', '-in', csr, '-CA', certFile, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext);
  return { certFile, server: { cert: readFileSync(cert), key: readFileSync(key) } };
}
