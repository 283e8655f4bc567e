/** The bare SMTP sink's one login (a loopback benchmark's, not a secret). */
export const BARE_SMTP_USERNAME = 'bench';
export const BARE_SMTP_PASSWORD = 'bench-password-of-the-bare-sink';
