import { Events, type NatsConnection } from 'nats';

/** Whether a connection is linked to the bus now, kept current from its status events. */
export interface BusLink {
  readonly up: boolean;
}

const links = new WeakMap<NatsConnection, BusLink>();

/**
 * The link state of a connection, followed once per connection: down from a disconnect until the
 * reconnect. While it is down nats.js would buffer a request until it times out (and could send
 * it after the caller gave up); callers fail fast instead.
 */
export function busLink(connection: NatsConnection): BusLink {
  const known = links.get(connection);
  if (known) return known;
  const link = { up: !connection.isClosed() };
  links.set(connection, link);
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type === Events.Disconnect) link.up = false;
      else if (status.type === Events.Reconnect) link.up = true;
    }
    link.up = false;
  })().catch(() => {
    link.up = false;
  });
  return link;
}
