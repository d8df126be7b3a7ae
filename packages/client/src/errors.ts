/**
 * Errors the client throws. Every failure is an AlgohostError with the HTTP status (0 when no
 * answer came), the platform's numeric error code from `{"error": {"code", "message"}}`
 * (docs/compatibility.md §1) or a system code such as "ECONNREFUSED", and the server's message.
 */
export class AlgohostError extends Error {
  override readonly name: string = 'AlgohostError';

  constructor(
    /** HTTP status; 0 when the request never got an answer. */
    readonly status: number,
    /** The platform's error code (docs/compatibility.md §1), or a system code (ECONNREFUSED, ETIMEDOUT…) when status is 0. */
    readonly code: number | string,
    message: string,
    readonly details: { method?: string; url?: string; requestId?: string; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }

  /**
   * True when the server does not have the endpoint at all (an older server, or a feature not
   * built yet), as opposed to a missing algorithm, file or build.
   */
  get endpointMissing(): boolean {
    return this.status === 404 && /^no such endpoint\b/i.test(this.message);
  }
}

/**
 * An algorithm ran and failed: the call API answers 200 with `{"error": {message, stacktrace,
 * error_type}}` (docs/compatibility.md §2), so this is not an HTTP failure.
 */
export class AlgorithmError extends AlgohostError {
  override readonly name: string = 'AlgorithmError';

  constructor(
    message: string,
    readonly errorType: string,
    readonly stacktrace: string | undefined,
    readonly metadata: Record<string, unknown> | undefined,
  ) {
    super(200, errorType, message);
  }
}

/** Builds the AlgohostError of a non-2xx answer from its body (JSON or not) and headers. */
export async function errorFromResponse(res: Response, method: string, url: string): Promise<AlgohostError> {
  const text = await res.text().catch(() => '');
  let code: number | string = res.status;
  let message = '';
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (body && typeof body === 'object' && body.error && typeof body.error === 'object') {
      if (typeof body.error.code === 'number' || typeof body.error.code === 'string') code = body.error.code;
      if (typeof body.error.message === 'string') message = body.error.message;
    }
  } catch {
    // not JSON: fall back to the header or the text below
  }
  if (!message) message = res.headers.get('x-error-message') ?? '';
  if (!message) message = text.trim().split('\n')[0]?.slice(0, 300) ?? '';
  if (!message) message = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  return new AlgohostError(res.status, code, message, { method, url, requestId: res.headers.get('x-request-id') ?? undefined });
}

/** Turns a fetch rejection (connection refused, DNS failure, TLS, abort) into an AlgohostError. */
export function errorFromFetchFailure(err: unknown, method: string, url: string): AlgohostError {
  if (err instanceof AlgohostError) return err;
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') {
    return new AlgohostError(0, e.name === 'TimeoutError' ? 'ETIMEDOUT' : 'ABORTED', `request to ${origin(url)} was aborted`, {
      method,
      url,
      cause: err,
    });
  }
  const code = e?.cause?.code ?? 'EFETCH';
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found (DNS lookup failed)',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
    UND_ERR_SOCKET: 'connection closed',
    DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate (set ca_cert in the profile)',
    SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in the chain (set ca_cert in the profile)',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the certificate (set ca_cert in the profile)',
    CERT_HAS_EXPIRED: 'the certificate has expired',
    ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate does not match the host name',
  };
  const reason = reasons[code] ?? e?.cause?.message ?? e?.message ?? String(err);
  return new AlgohostError(0, code, `cannot reach ${origin(url)}: ${reason}`, { method, url, cause: err });
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
