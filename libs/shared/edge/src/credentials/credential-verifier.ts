/**
 * Checks one kind of credential an edge receives (API keys now; SMTP credentials and dashboard
 * sessions later) and answers who presents it, or null when the credential is unknown. Failing to
 * decide (the owning service is down) rejects instead of answering null.
 */
export interface CredentialVerifier<Credential, Principal> {
  verify(credential: Credential, requestId: string): Promise<Principal | null>;
}
