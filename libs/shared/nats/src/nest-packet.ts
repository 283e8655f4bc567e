/**
 * The packet shapes of @nestjs/microservices' NATS transport, so that a plain `nats` client can
 * talk to Nest services (and read Nest-emitted events) without a ClientProxy.
 */
export interface NestRequestPacket<T> {
  id: string;
  pattern: string;
  data: T;
}

export interface NestEventPacket<T> {
  pattern: string;
  data: T;
}

export interface NestResponsePacket<T> {
  id: string;
  response?: T;
  err?: unknown;
  isDisposed?: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodePacket(packet: object): Uint8Array {
  return encoder.encode(JSON.stringify(packet));
}

export function decodePacket<T>(bytes: Uint8Array): T {
  return JSON.parse(decoder.decode(bytes)) as T;
}
