/** Why an outbound request got no HTTP response. */
export type OutboundErrorKind = 'blocked' | 'dns' | 'refused' | 'timeout' | 'tls' | 'network';

export interface OutboundFailure {
  kind: OutboundErrorKind;
  message: string;
}

/** Raised inside a request (by the lookup, the connect check or the timer) and mapped back. */
export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
  ) {
    super(message);
  }
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENODATA']);
const REFUSED_CODES = new Set(['ECONNREFUSED']);
/** undici's own timeouts (connecting, waiting for headers, between body chunks). */
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function isTlsCode(code: string): boolean {
  return (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code.includes('CERT') ||
    code === 'EPROTO' ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN' ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'
  );
}

/** The typed failure of any error a request ended with. */
export function outboundFailureOf(error: unknown): OutboundFailure {
  if (error instanceof OutboundError) return { kind: error.kind, message: error.message };
  const code = (error as { code?: unknown } | null)?.code;
  const text = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string') {
    if (DNS_CODES.has(code)) return { kind: 'dns', message: `name not resolved (${code})` };
    if (REFUSED_CODES.has(code)) return { kind: 'refused', message: 'connection refused' };
    if (TIMEOUT_CODES.has(code)) return { kind: 'timeout', message: text };
    if (isTlsCode(code)) return { kind: 'tls', message: `TLS failed: ${text}` };
  }
  return { kind: 'network', message: text };
}
