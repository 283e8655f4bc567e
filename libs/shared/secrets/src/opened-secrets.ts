/** Secrets kept opened at most by default (the oldest opened goes first). */
export const OPENED_SECRETS_MAX = 10_000;

/** Opens the sealed secret of the row `id` (throws for an envelope that does not open). */
export type OpenSecret = (id: string, sealed: string) => string;

/**
 * Signing secrets opened once per sealed value rather than once per call: kept by the id of the
 * row that holds them, and opened again when that row's sealed value differs (a new secret). An
 * envelope that does not open is never kept.
 */
export class OpenedSecrets {
  private readonly opened = new Map<string, { sealed: string; secret: string }>();

  constructor(
    private readonly openSecret: OpenSecret,
    private readonly max = OPENED_SECRETS_MAX,
  ) {}

  /** Throws what `openSecret` throws for an envelope that does not open. */
  open(id: string, sealed: string): string {
    const kept = this.opened.get(id);
    if (kept?.sealed === sealed) return kept.secret;
    const secret = this.openSecret(id, sealed);
    this.opened.delete(id);
    if (this.opened.size >= this.max) {
      const oldest = this.opened.keys().next();
      if (!oldest.done) this.opened.delete(oldest.value);
    }
    this.opened.set(id, { sealed, secret });
    return secret;
  }
}
