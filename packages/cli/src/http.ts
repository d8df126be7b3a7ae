/**
 * The fetch the CLI gives the client (the client itself only needs a standard fetch). It uses
 * undici directly so that a profile's `ca_cert` is trusted for https:// servers, and with no
 * header or body timeouts: a call may run up to 3000 s and a build log can be silent for
 * minutes, longer than the 300 s defaults of Node's built-in fetch.
 */
import fs from 'node:fs';
import tls from 'node:tls';
import { Agent, fetch as undiciFetch } from 'undici';
import { CliError } from './errors.js';

export function cliFetch(caCert?: string): typeof fetch {
  let ca: string[] | undefined;
  if (caCert) {
    try {
      ca = [...tls.rootCertificates, fs.readFileSync(caCert, 'utf8')];
    } catch (err) {
      throw new CliError(`cannot read ca_cert ${caCert}: ${(err as Error).message}`);
    }
  }
  const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 1000, connect: ca ? { ca } : undefined });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: agent,
    })) as unknown as typeof fetch;
}
