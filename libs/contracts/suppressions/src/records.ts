/** Wire records, exactly as the public API returns them (reference contract field names). */

export interface SuppressionRecord {
  object: 'suppression';
  id: string;
  created_at: string;
  /** Normalised: trimmed, lowercased. */
  email: string;
  /** The sending domain it applies to; null: every domain of the account. */
  domain: string | null;
  /** Free text; null when none was given. */
  reason: string | null;
  expires_at: string;
}

/** The internal send-time check's answer: which of the requested addresses are suppressed. */
export interface CheckSuppressionsResult {
  /**
   * One entry per distinct requested address (as it was given) that an unexpired suppression
   * covers, in request order. `reason` is the suppression's reason, `''` when it has none.
   */
  suppressed: { email: string; reason: string }[];
}

/** One unexpired suppression as a sender's cache keeps it (see SuppressionsSubjects.snapshot). */
export interface SuppressionSnapshotEntry {
  /** Normalised: trimmed, lowercased. */
  email: string;
  /** The sending domain it applies to; null: every domain of the account. */
  domain: string | null;
  /** `''` when it has none. */
  reason: string;
  expires_at: string;
}

/**
 * Every unexpired suppression of an account, or null when it has more than the request's
 * `max` (the sender then checks each send instead).
 */
export interface SuppressionSnapshotResult {
  suppressions: SuppressionSnapshotEntry[] | null;
}

/** Broadcast once a change of the account's suppressions has committed (see SuppressionsSubjects.changed). */
export interface SuppressionsChangedEvent {
  account_id: string;
}

/** The answer to an automatic suppression (hard bounce, repeated failures). */
export interface AutomaticSuppressionResult {
  /** False when an unexpired suppression already covered the address: nothing changed. */
  created: boolean;
  suppression: SuppressionRecord;
}

/** `data` of the `suppression.created` webhook (reference webhooks.yaml SuppressionWebhookData). */
export interface SuppressionCreatedData {
  account_id: string;
  /** The suppressed address (normalised). */
  recipient: string;
  created_at: string;
  expires_at: string;
  /** The suppression's reason; empty when none was given. */
  reason: string;
  /** The domain the suppression applies to; empty: every domain of the account. */
  sending_domain: string;
}
