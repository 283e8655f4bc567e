import { messageUuidOfOriginal } from './message-ref';

const ID = '0190a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b';

describe('messageUuidOfOriginal', () => {
  it('reads the VERP Return-Path first, then a <uuid@domain> Message-ID', () => {
    expect(messageUuidOfOriginal(`bounce+${ID}@bounces.envoi.test`, '<other@x>')).toBe(ID);
    expect(messageUuidOfOriginal(null, `<${ID.toUpperCase()}@shop.example>`)).toBe(ID);
    expect(messageUuidOfOriginal('someone@else.example', ` <${ID}@shop.example> `)).toBe(ID);
  });

  it('is null when neither names a message', () => {
    expect(messageUuidOfOriginal('someone@else.example', '<abc@shop.example>')).toBeNull();
    expect(messageUuidOfOriginal(null, null)).toBeNull();
  });
});
