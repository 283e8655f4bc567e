import { isEmail, isRFC3339 } from 'class-validator';

/**
 * Suppressions compare addresses normalised: trimmed and lowercased (local part included, as the
 * reference service does). Both the suppressions service and its callers use this one function.
 */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

/** An email address as suppressions store it: `local@domain.tld`, 254 characters at most. */
export function isSuppressibleEmail(normalized: string): boolean {
  return (
    normalized.length <= 254 &&
    isEmail(normalized, {
      allow_display_name: false,
      allow_ip_domain: false,
      allow_utf8_local_part: true,
      require_tld: true,
    })
  );
}

/** An RFC 3339 date-time (`2030-01-01T00:00:00Z`, offsets and fractions allowed), or null. */
export function parseRfc3339(value: string): Date | null {
  if (!isRFC3339(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}
