import { ApiError } from '../errors/api-error';
import { readWebhookFilters } from './webhook-filters';

describe('readWebhookFilters', () => {
  it('reads true and false, and leaves out what is not given', () => {
    expect(readWebhookFilters({ enabled: 'false', on_opened: 'true', limit: '5' })).toEqual({
      enabled: false,
      on_opened: true,
    });
    expect(readWebhookFilters({})).toEqual({});
  });

  it.each([
    [{ enabled: 'yes' }, 'enabled must be a boolean (true or false)'],
    [{ on_dns_error: '1' }, 'on_dns_error must be a boolean (true or false)'],
    [{ on_failed: '' }, 'on_failed must be a boolean (true or false)'],
    [{ on_clicked: ['true', 'false'] }, 'on_clicked must be a boolean (true or false)'],
  ])('answers 400 to %j', (query, message) => {
    expect(() => readWebhookFilters(query)).toThrow(new ApiError(400, message));
  });
});
