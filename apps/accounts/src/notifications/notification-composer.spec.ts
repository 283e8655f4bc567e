import type { ApiKeyIpAllowListChangedData } from '@envoi/contracts-accounts';
import type { RouteDisabledData } from '@envoi/contracts-routes';
import type { WebhookDisabledData } from '@envoi/contracts-webhooks';

import {
  composeIpAllowListChanged,
  composeRouteDisabled,
  composeWebhookDisabled,
  describeAllowList,
  escapeHtml,
} from './notification-composer';

const context = { accountName: 'Acme <Mail>', dashboardUrl: 'https://dash.envoi.example/' };

const disabled: WebhookDisabledData = {
  account_id: '5b0f8f8e-2d6a-4c1e-9c64-1f6a4e0b7a11',
  webhook_id: '0d9c3f4e-5a6b-4c7d-8e9f-a0b1c2d3e4f5',
  name: 'Orders & bounces',
  url: 'https://hooks.example.com/envoi',
  reason: 'consecutive_failures',
  consecutive_failures: 100,
  last_status: 503,
  disabled_at: '2026-11-25T10:00:00.000Z',
};

const allowList: ApiKeyIpAllowListChangedData = {
  account_id: disabled.account_id,
  key_id: '7e1d2c3b-4a59-4687-9a0b-1c2d3e4f5a6b',
  label: 'Production',
  previous_ip_allow_list: ['192.0.2.0/24'],
  ip_allow_list: ['192.0.2.0/24', '2001:db8::/32'],
  changed_by_key_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  changed_from_ip: '192.0.2.7',
  changed_at: '2026-11-25T11:00:00.000Z',
};

describe('composeWebhookDisabled', () => {
  it('names the webhook, its URL, the number of failures and the last status', () => {
    const mail = composeWebhookDisabled(disabled, context);
    expect(mail.subject).toBe('Webhook "Orders & bounces" was disabled');
    expect(mail.text).toContain('its endpoint failed 100 consecutive times');
    expect(mail.text).toContain('URL: https://hooks.example.com/envoi');
    expect(mail.text).toContain('Last response: HTTP 503');
    expect(mail.text).toContain(`https://dash.envoi.example/webhooks/${disabled.webhook_id}`);
  });

  it('says 410 Gone, and no response when there was none', () => {
    const mail = composeWebhookDisabled(
      { ...disabled, reason: 'gone', consecutive_failures: 1, last_status: null },
      context,
    );
    expect(mail.text).toContain('its endpoint answered 410 Gone');
    expect(mail.text).toContain('Last response: none (no answer)');
  });

  it('escapes every value in the HTML part', () => {
    const { html } = composeWebhookDisabled(disabled, context);
    expect(html).toContain('Orders &amp; bounces');
    expect(html).toContain('Acme &lt;Mail&gt;');
    expect(html).not.toContain('<Mail>');
  });

  it('has no link without a dashboard URL', () => {
    const mail = composeWebhookDisabled(disabled, { ...context, dashboardUrl: '' });
    expect(mail.text).not.toContain('/webhooks/');
    expect(mail.html).not.toContain('<a ');
  });
});

const routeDisabled: RouteDisabledData = {
  account_id: disabled.account_id,
  route_id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
  name: 'Support <inbox>',
  url: 'https://inbound.example.com/envoi',
  consecutive_failures: 100,
  last_status: null,
  disabled_at: '2026-11-25T12:00:00.000Z',
};

describe('composeRouteDisabled', () => {
  it('names the route, its URL, the number of failures and the last response', () => {
    const mail = composeRouteDisabled(routeDisabled, context);
    expect(mail.subject).toBe('Route "Support <inbox>" was disabled');
    expect(mail.text).toContain('its URL failed 100 consecutive times');
    expect(mail.text).toContain('URL: https://inbound.example.com/envoi');
    expect(mail.text).toContain('Last response: none (no answer)');
    expect(mail.text).toContain(`https://dash.envoi.example/routes/${routeDisabled.route_id}`);
    expect(composeRouteDisabled({ ...routeDisabled, last_status: 502 }, context).text).toContain(
      'Last response: HTTP 502',
    );
  });

  it('escapes every value in the HTML part', () => {
    const { html } = composeRouteDisabled(routeDisabled, context);
    expect(html).toContain('Support &lt;inbox&gt;');
    expect(html).not.toContain('<inbox>');
  });
});

describe('composeIpAllowListChanged', () => {
  it('gives the key, both lists and who changed it from where', () => {
    const mail = composeIpAllowListChanged(allowList, context);
    expect(mail.subject).toBe('The IP allow list of API key "Production" changed');
    expect(mail.text).toContain('Previous list: 192.0.2.0/24\n');
    expect(mail.text).toContain('New list: 192.0.2.0/24, 2001:db8::/32\n');
    expect(mail.text).toContain(
      `Changed by: API key ${allowList.changed_by_key_id} from 192.0.2.7`,
    );
    expect(mail.html).toContain(
      '<th align="left">New list</th><td>192.0.2.0/24, 2001:db8::/32</td>',
    );
  });

  it('says when nobody of the account is on record as the changer, and an empty list', () => {
    const mail = composeIpAllowListChanged(
      { ...allowList, previous_ip_allow_list: [], changed_by_key_id: null, changed_from_ip: null },
      context,
    );
    expect(mail.text).toContain('Previous list: none (any address may use the key)');
    expect(mail.text).toContain('Changed by: not recorded');
  });
});

describe('helpers', () => {
  it('describes an allow list', () => {
    expect(describeAllowList([])).toMatch(/any address/);
    expect(describeAllowList(['10.0.0.1', '10.0.0.2'])).toBe('10.0.0.1, 10.0.0.2');
  });

  it('escapes the five HTML characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;',
    );
  });
});
