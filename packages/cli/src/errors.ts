/**
 * Every failure ends as one line on stderr and a non-zero exit. This module turns any error
 * (ours, the client's, Node's) into that line; it never prints a stack trace.
 */
import { AlgohostError, AlgorithmError } from '@algohost/client';

/** A failure with a message meant for the user as is. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export interface ErrorContext {
  profile?: string;
  server?: string;
}

export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

export function describeError(err: unknown, ctx: ErrorContext = {}): string {
  const profile = ctx.profile ?? 'default';
  const authHint = `run "algo auth${profile === 'default' ? '' : ` --profile ${profile}`}"`;
  if (err instanceof CliError) return oneLine(err.message);
  if (err instanceof AlgorithmError) return oneLine(`algorithm failed: ${err.errorType}: ${err.message}`);
  if (err instanceof AlgohostError) {
    const what = requestLabel(err);
    if (err.status === 0) return oneLine(`${err.message} (is the server running? check api_server of profile "${profile}")`);
    if (err.endpointMissing) {
      return oneLine(`this server does not support this yet: ${what} answered 404 "no such endpoint"`);
    }
    if (err.status === 401) return oneLine(`the server refused the credentials of profile "${profile}": ${err.message} (${authHint})`);
    return oneLine(`${err.message} (HTTP ${err.status}${typeof err.code === 'number' ? `, code ${err.code}` : ''})`);
  }
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e === 'object' && typeof e.message === 'string') {
    if (e.code === 'ENOENT' && e.path) return oneLine(`no such file or directory: ${e.path}`);
    if (e.code === 'EACCES' && e.path) return oneLine(`permission denied: ${e.path}`);
    if (e.code === 'EISDIR' && e.path) return oneLine(`is a directory: ${e.path}`);
    return oneLine(e.message);
  }
  return oneLine(String(err));
}

function requestLabel(err: AlgohostError): string {
  const { method, url } = err.details;
  if (!url) return 'the request';
  try {
    return `${method ?? 'GET'} ${new URL(url).pathname}`;
  } catch {
    return `${method ?? 'GET'} ${url}`;
  }
}
