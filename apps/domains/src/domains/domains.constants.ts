/** The DnsEndpoints of this deployment (from configuration). */
export const DNS_ENDPOINTS = Symbol('DNS_ENDPOINTS');
