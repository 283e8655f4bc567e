/**
 * A request/reply subject with its payload and reply types attached (phantom types), so that a
 * client call infers both from the subject alone. Subjects follow `<domain>.<entity>.<verb>.v<N>`.
 */
export interface RequestSubject<Request, Reply> {
  readonly kind: 'request';
  readonly name: string;
  /** Never set at run time; carries the types. */
  readonly types?: { request: Request; reply: Reply };
}

/** A fire-and-forget event subject, named in the past tense. */
export interface EventSubject<Event> {
  readonly kind: 'event';
  readonly name: string;
  readonly types?: { event: Event };
}

const SUBJECT_PATTERN = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+\.v[0-9]+$/;

function checkName(name: string): string {
  if (!SUBJECT_PATTERN.test(name)) throw new Error(`invalid subject name: ${name}`);
  return name;
}

export function requestSubject<Request, Reply>(name: string): RequestSubject<Request, Reply> {
  return { kind: 'request', name: checkName(name) };
}

export function eventSubject<Event>(name: string): EventSubject<Event> {
  return { kind: 'event', name: checkName(name) };
}

export type RequestOf<S> = S extends RequestSubject<infer Request, unknown> ? Request : never;
export type ReplyOf<S> = S extends RequestSubject<unknown, infer Reply> ? Reply : never;
export type EventOf<S> = S extends EventSubject<infer Event> ? Event : never;
