import { DELIVERY_STREAM_SUBJECTS, type StreamSubject } from '@envoi/contracts-core';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { DomainsStreamSubjects } from '@envoi/contracts-domains';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { SuppressionsStreamSubjects } from '@envoi/contracts-suppressions';

/** Every stream subject an outbox publishes to: one entry per contract that declares some. */
const PUBLISHED: Record<string, Readonly<Record<string, StreamSubject<unknown>>>> = {
  DeliveryStreamSubjects,
  DomainsStreamSubjects,
  MessagesStreamSubjects,
  SuppressionsStreamSubjects,
};

const VERSIONED = /\.v[1-9][0-9]*$/;

describe('stream subjects', () => {
  const subjects = Object.entries(PUBLISHED).flatMap(([contract, declared]) =>
    Object.entries(declared).map(([key, subject]) => [`${contract}.${key}`, subject.name]),
  );

  it.each(subjects)('%s (%s) carries a version', (_key, name) => {
    expect(name).toMatch(VERSIONED);
  });

  it.each(DELIVERY_STREAM_SUBJECTS)('the DELIVERY stream lists %s with a version', (name) => {
    expect(name).toMatch(VERSIONED);
  });
});
