import { appendOpenPixel, rewriteLinks, type TrackedLink } from './html-tracking';
import { trackingToken } from './tracking-token';

/** What tracking asks of one message. */
export interface TrackingChoice {
  opens: boolean;
  clicks: boolean;
}

/** A message's HTML as sent, and the links its click tokens point at. */
export interface TrackedHtml {
  html: string;
  links: TrackedLink[];
}

/** Where tracking URLs point and the key that signs their tokens (the same in every service). */
export interface TrackingSettings {
  TRACKING_BASE_URL: string;
  TRACKING_SECRET: string;
}

/**
 * Prepares a message's HTML for open and click tracking (platform notes 3.3): trackable links go
 * through `<TRACKING_BASE_URL>/t/c/<token>`, and a 1×1 image `<TRACKING_BASE_URL>/t/o/<token>`
 * goes before `</body>`. Tokens are HMAC-signed (message id, kind, link position); the URLs
 * themselves stay in the database. Text and AMP parts are left alone; a message without HTML gets
 * no tracking.
 */
export class HtmlTracker {
  private readonly secret: Buffer;
  private readonly baseUrl: string;

  constructor(settings: TrackingSettings) {
    this.secret = Buffer.from(settings.TRACKING_SECRET, 'utf8');
    this.baseUrl = settings.TRACKING_BASE_URL.replace(/\/+$/, '');
  }

  /** `firstLink`: the position of the HTML's first tracked link (after those of earlier HTML parts). */
  track(html: string, messageId: string, choice: TrackingChoice, firstLink = 0): TrackedHtml {
    let tracked: TrackedHtml = { html, links: [] };
    if (choice.clicks) {
      const rewritten = rewriteLinks(html, (index) => {
        const token = trackingToken(this.secret, messageId, 'click', firstLink + index);
        return `${this.baseUrl}/t/c/${token}`;
      });
      const links = rewritten.links.map((link) => ({ ...link, index: firstLink + link.index }));
      tracked = { html: rewritten.html, links };
    }
    if (choice.opens) {
      const pixel = `${this.baseUrl}/t/o/${trackingToken(this.secret, messageId, 'open', 0)}`;
      tracked = { ...tracked, html: appendOpenPixel(tracked.html, pixel) };
    }
    return tracked;
  }
}
