import fs from "node:fs";
import tls from "node:tls";
import { ConfigError } from "./env";

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/**
 * The certificate and key as a secure context's options, checked by building one (a key that does
 * not match the certificate, or a file that is not PEM, fails here rather than at the first
 * handshake). Read at start and on every SIGHUP, so a renewed certificate needs no restart.
 */
export function readTlsFiles(files: TlsFiles): { cert: Buffer; key: Buffer } {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = fs.readFileSync(files.certFile);
    key = fs.readFileSync(files.keyFile);
  } catch (e) {
    throw new ConfigError(`cannot read the TLS certificate or key: ${(e as Error).message}`);
  }
  try {
    tls.createSecureContext({ cert, key });
  } catch (e) {
    throw new ConfigError(
      `TIDE_TLS_CERT_FILE ${files.certFile} and TIDE_TLS_KEY_FILE ${files.keyFile} are not a ` +
        `PEM certificate and its key: ${(e as Error).message}`,
    );
  }
  return { cert, key };
}
