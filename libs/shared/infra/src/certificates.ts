import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { generate } from 'selfsigned';

export interface CertificatePaths {
  certPath: string;
  keyPath: string;
}

/** A self-signed certificate for localhost/127.0.0.1/::1, generated once into `dir`. */
export async function ensureDevCertificate(dir: string): Promise<CertificatePaths> {
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  if (existsSync(certPath) && existsSync(keyPath)) return { certPath, keyPath };
  mkdirSync(dir, { recursive: true });
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 825 * 24 * 3600 * 1000),
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  writeFileSync(keyPath, pems.private, { mode: 0o600 });
  writeFileSync(certPath, pems.cert);
  return { certPath, keyPath };
}

export function readCertificate(paths: CertificatePaths): { cert: string; key: string } {
  return { cert: readFileSync(paths.certPath, 'utf8'), key: readFileSync(paths.keyPath, 'utf8') };
}
