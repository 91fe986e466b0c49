/** The parts of the configuration that make the User-Agent (config.crawler). */
export interface UserAgentSettings {
  user_agent: string;
  contact_url: string;
}

/**
 * The one User-Agent of every request notary makes (crawler pages, robots.txt, sitemaps, `/v1/extract`, the
 * browser): `${user_agent} (+${contact_url})`. robots.txt groups are matched on its product token (`user_agent` up
 * to the first "/").
 */
export function userAgentHeader(settings: UserAgentSettings): string {
  return `${settings.user_agent} (+${settings.contact_url})`;
}
