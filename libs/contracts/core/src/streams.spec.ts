import { isHostname, normalizeDomainName } from './hostnames';
import { deliveryJobSubject, streamSubject } from './streams';

describe('streamSubject', () => {
  it('names a subject of the events stream', () => {
    expect(streamSubject('events.domain.dns_error.v1')).toEqual({
      kind: 'stream',
      stream: 'EVENTS',
      name: 'events.domain.dns_error.v1',
    });
  });

  it('takes any version from 1', () => {
    expect(streamSubject('events.message.delivered.v12').name).toBe('events.message.delivered.v12');
  });

  it.each([
    'events.domain.dns_error',
    'events.domain.dns_error.v',
    'events.domain.dns_error.v0',
    'events.domain.dns_error.v1.',
    'events.v1',
    'domain.dns_error.v1',
    'events',
    'events.',
    'events.Domain',
    'events.domain.*.v1',
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
      name: 'delivery.jobs.v1',
    });
  });
});
