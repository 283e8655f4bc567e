import { isHostname, normalizeDomainName } from './hostnames';
import { deliveryJobSubject, streamSubject } from './streams';

describe('streamSubject', () => {
  it('names a subject of the events stream', () => {
    expect(streamSubject('events.domain.dns_error')).toEqual({
      kind: 'stream',
      stream: 'EVENTS',
      name: 'events.domain.dns_error',
    });
  });

  it.each([
    'domain.dns_error',
    'events',
    'events.',
    'events.Domain',
    'events.domain.*',
    'events.>',
  ])('refuses %j', (name) => {
    expect(() => streamSubject(name)).toThrow('invalid stream subject');
  });
});

describe('hostnames', () => {
  it('normalises and validates', () => {
    expect(normalizeDomainName(' Example.COM. ')).toBe('example.com');
    expect(isHostname('mail.example.com')).toBe(true);
    expect(isHostname('example')).toBe(false);
    expect(isHostname('1.2.3.4')).toBe(false);
  });
});

describe('deliveryJobSubject', () => {
  it('names the subject of the delivery work queue', () => {
    expect(deliveryJobSubject()).toEqual({
      kind: 'stream',
      stream: 'DELIVERY',
      name: 'delivery.jobs',
    });
  });
});
