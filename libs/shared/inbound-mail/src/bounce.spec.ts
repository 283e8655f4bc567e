import { isBounce } from './bounce';

const REPLY = {
  headers: [{ name: 'Return-Path', value: '<maria@example.com>' }],
  from: [{ name: 'Maria', address: 'maria@example.com' }],
  subject: 'Re: your order',
  contentType: 'text/plain',
};

describe('isBounce', () => {
  it('is false for a person’s reply and for an autoreply', () => {
    expect(isBounce(REPLY, 'maria@example.com')).toBe(false);
    expect(isBounce({ ...REPLY, subject: 'Out of office' }, 'maria@example.com')).toBe(false);
  });

  it('is true for the null reverse-path, from MAIL FROM or from Return-Path', () => {
    expect(isBounce(REPLY, '')).toBe(true);
    expect(isBounce(REPLY, '<>')).toBe(true);
    expect(isBounce({ ...REPLY, headers: [{ name: 'Return-Path', value: '<>' }] })).toBe(true);
  });

  it('is true for a delivery-status report and false for a read receipt', () => {
    const report = (type: string) => ({
      ...REPLY,
      contentType: 'multipart/report',
      headers: [
        { name: 'Content-Type', value: `multipart/report; report-type=${type}; boundary="b"` },
      ],
    });

    expect(isBounce(report('delivery-status'), 'x@example.net')).toBe(true);
    expect(isBounce(report('disposition-notification'), 'x@example.net')).toBe(false);
  });

  it('is true for a mailer-daemon message with a bounce subject', () => {
    const daemon = { ...REPLY, from: [{ name: '', address: 'MAILER-DAEMON@mx.example.net' }] };

    expect(isBounce({ ...daemon, subject: 'failure notice' }, 'x@example.net')).toBe(true);
    expect(isBounce({ ...daemon, subject: 'Your weekly report' }, 'x@example.net')).toBe(false);
  });
});
