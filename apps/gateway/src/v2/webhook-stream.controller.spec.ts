import { ApiError } from '../errors/api-error';
import { readStreamWebhookId } from './webhook-stream.controller';

describe('readStreamWebhookId', () => {
  it('is absent for a temporary webhook, else a lowercased uuid', () => {
    expect(readStreamWebhookId({})).toBeUndefined();
    expect(readStreamWebhookId({ webhook_id: '6F1C4D0E-8A1B-4C2D-9E3F-0A1B2C3D4E5F' })).toBe(
      '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f',
    );
  });

  it('refuses anything else with a 400', () => {
    for (const query of [
      { webhook_id: 'nope' },
      { webhook_id: ['6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f', 'x'] },
      { route_id: '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f' },
    ]) {
      expect(() => readStreamWebhookId(query)).toThrow(ApiError);
      expect(() => readStreamWebhookId(query)).toThrow(/webhook_id|unknown query parameter/);
    }
  });
});
