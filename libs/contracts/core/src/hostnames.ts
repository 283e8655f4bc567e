/** Lowercased, trimmed, trailing dot removed. */
export function normalizeDomainName(raw: string): string {
  return raw.trim().toLowerCase().replace(/\.$/, '');
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** One DNS label: 1–63 of `[a-z0-9-]`, no hyphen at either end (lowercase input). */
export function isDnsLabel(label: string): boolean {
  return LABEL.test(label);
}

/** A DNS hostname of at least two labels, each 1–63 of `[a-z0-9-]`, 253 characters at most. */
export function isHostname(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (labels.length < 2) return false;
  return labels.every(isDnsLabel) && !/^[0-9]+$/.test(labels[labels.length - 1]);
}
