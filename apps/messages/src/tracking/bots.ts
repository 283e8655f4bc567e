/**
 * User agents of mail proxies, link scanners and crawlers that fetch pixels and links on their
 * own (Gmail's and Yahoo's image proxies, security scanners, previews, scripts). Apple Mail
 * Privacy Protection is recognised by IP range in the reference; not here.
 */
const BOT_AGENT =
  /GoogleImageProxy|YahooMailProxy|Superhuman|Fastmail|bot\b|crawler|spider|scanner|preview|headless|curl\/|wget\/|python-requests|python-urllib|go-http-client|java\/|okhttp|libwww|httpclient/i;

/** Whether a hit looks automated (the `is_bot` of opens and clicks); an empty agent does. */
export function isBot(userAgent: string): boolean {
  return userAgent.trim() === '' || BOT_AGENT.test(userAgent);
}
