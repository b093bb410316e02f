// Certificates for TLS tests, made with openssl in a test's directory: a CA, a server certificate
// for 127.0.0.1 and localhost signed by it, a client certificate signed by it (mutual TLS), and an
// unrelated CA a misconfigured client might trust instead. EC keys: each takes milliseconds.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCertificates {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA that signed none of these. */
  otherCa: string;
}

const openssl = (dir: string, args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function selfSigned(dir: string, name: string, subject: string): void {
  openssl(dir, ['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '1', '-subj', subject]);
}

function signed(dir: string, name: string, subject: string, extensions: string | null): void {
  openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  const ext = extensions === null ? [] : ['-extfile', `${name}.ext`];
  if (extensions !== null) writeFileSync(join(dir, `${name}.ext`), `${extensions}\n`);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '1', ...ext]);
}

export function makeTestCertificates(dir: string): TestCertificates {
  selfSigned(dir, 'ca', '/CN=relay test CA');
  selfSigned(dir, 'other-ca', '/CN=another CA');
  signed(dir, 'server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  signed(dir, 'client', '/CN=relay', 'extendedKeyUsage=clientAuth');
  const at = (f: string): string => join(dir, f);
  return {
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    otherCa: at('other-ca.pem'),
  };
}
