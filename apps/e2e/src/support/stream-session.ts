import { type AccountSession, closeSessions, createAccountSession } from './account-session';
import type { RequestOptions } from './api-client';
import { StreamListener } from './stream-listener';

// POST …/stream and the WebSocket are beyond openapi.yaml (platform notes 1.12).
const BEYOND_CONTRACT: RequestOptions = { contract: 'skip' };

/** The account a stream spec works in: opens streams, connects listeners closed after each test. */
export class StreamSession<Data> {
  private readonly listeners: Array<StreamListener<Data>> = [];

  constructor(readonly session: AccountSession) {}

  /** The account's full-access key. */
  get key(): string {
    return this.session.created.api_key.secret_key;
  }

  /** POST …/{kind}/stream{query}; fails unless it answers 200. */
  async open<Opened extends { ws_url: string }>(
    kind: 'webhooks' | 'routes',
    query = '',
  ): Promise<Opened> {
    const response = await this.session.api.post<Opened>(
      this.session.path(`/${kind}/stream${query}`),
      undefined,
      BEYOND_CONTRACT,
    );
    if (response.status !== 200) {
      throw new Error(`opening a ${kind} stream: ${response.status} ${response.text}`);
    }
    return response.body;
  }

  /** A listener (the account's key unless another), closed after the test. */
  async listen(wsUrl: string, force = false, key = this.key): Promise<StreamListener<Data>> {
    const listener = await StreamListener.connect<Data>(wsUrl, key, force);
    this.listeners.push(listener);
    return listener;
  }

  /** A handshake not kept: for the refusals (see `refusal`). */
  connect(wsUrl: string, key = this.key, force = false): Promise<StreamListener<Data>> {
    return StreamListener.connect<Data>(wsUrl, key, force);
  }

  async closeListeners(): Promise<void> {
    await Promise.all(this.listeners.splice(0).map((listener) => listener.close()));
  }
}

/** A StreamSession on a new account for the file's tests; its listeners closed after each. */
export function useStreamSession<Data>(): () => StreamSession<Data> {
  let streams: StreamSession<Data> | undefined;
  beforeAll(async () => {
    streams = new StreamSession<Data>(await createAccountSession());
  }, 60_000);
  afterEach(() => streams?.closeListeners());
  afterAll(() => closeSessions());
  return () => {
    if (!streams) throw new Error('the stream session was not created');
    return streams;
  };
}
