import type { StreamSubject } from '@envoi/contracts-core';

/** One durable consumer found on a handler method. */
export interface DeclaredDurable {
  durable: string;
  subject: StreamSubject<unknown>;
  /** `Class.method`, for messages. */
  handler: string;
}

/**
 * What is wrong with a service's stream handlers: a subject it consumes with no handler or with
 * two, a handler for a subject it does not list, or a durable name used twice. Empty when sound.
 */
export function streamHandlerProblems(
  consumed: ReadonlyArray<StreamSubject<unknown>>,
  declared: readonly DeclaredDurable[],
): string[] {
  const problems: string[] = [];
  const consumedNames = new Set(consumed.map((subject) => subject.name));
  for (const name of consumedNames) {
    const handlers = declared.filter((entry) => entry.subject.name === name);
    if (handlers.length === 0) problems.push(`no handler for ${name}`);
    if (handlers.length > 1) {
      const which = handlers.map((entry) => entry.handler).join(', ');
      problems.push(`${name} has ${handlers.length} handlers: ${which}`);
    }
  }
  for (const entry of declared) {
    if (!consumedNames.has(entry.subject.name)) {
      problems.push(
        `${entry.handler} handles ${entry.subject.name}, which this service does not consume`,
      );
    }
  }
  const durables = new Set<string>();
  for (const entry of declared) {
    if (durables.has(entry.durable)) problems.push(`durable ${entry.durable} is declared twice`);
    durables.add(entry.durable);
  }
  return problems;
}
