import dgram from 'node:dgram';
import net from 'node:net';

import type { DnsRecord } from '@envoi/contracts-domains';
import dnsPacket from 'dns-packet';

/** A record a test publishes. A TXT value longer than 255 characters is split into strings. */
export type DnsTestRecord =
  | { type: 'A'; address: string }
  | { type: 'AAAA'; address: string }
  | { type: 'MX'; exchange: string; priority?: number }
  | { type: 'TXT'; value: string | readonly string[] }
  | { type: 'CNAME'; target: string };

/** How a name misbehaves: answer SERVFAIL, REFUSED, or never answer (the client times out). */
export type DnsFailure = 'servfail' | 'refused' | 'timeout';

const SERVFAIL = 2;
const NXDOMAIN = 3;
const REFUSED = 5;
const MAX_CNAME_CHASE = 8;
const TTL = 1;
const CLASSIC_UDP_LIMIT = 512;
const MAX_TCP_BUFFER = 64 * 1024;

function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

function txtStrings(value: string | readonly string[]): string[] {
  if (typeof value !== 'string') return [...value];
  const strings: string[] = [];
  for (let start = 0; start < value.length; start += 255) {
    strings.push(value.slice(start, start + 255));
  }
  return strings.length > 0 ? strings : [''];
}

function toAnswer(name: string, record: DnsTestRecord): dnsPacket.Answer {
  switch (record.type) {
    case 'A':
    case 'AAAA':
      return { type: record.type, name, ttl: TTL, class: 'IN', data: record.address };
    case 'CNAME':
      return { type: 'CNAME', name, ttl: TTL, class: 'IN', data: normalize(record.target) };
    case 'MX':
      return {
        type: 'MX',
        name,
        ttl: TTL,
        class: 'IN',
        data: { preference: record.priority ?? 10, exchange: normalize(record.exchange) },
      };
    case 'TXT':
      return { type: 'TXT', name, ttl: TTL, class: 'IN', data: txtStrings(record.value) };
  }
}

/**
 * A real DNS server on loopback for tests (UDP and TCP on one ephemeral port of 127.0.0.1),
 * answering from the records tests publish. It answers like a recursive resolver for its own
 * data: a query for a name that holds a CNAME gets the CNAME and, as far as the server knows
 * them, the chained records. A name can be made to fail (SERVFAIL, REFUSED) or to time out.
 * UDP answers over the client's size limit are truncated, so clients retry over TCP.
 */
export class DnsTestServer {
  private readonly records = new Map<string, DnsTestRecord[]>();
  private readonly failures = new Map<string, DnsFailure>();
  private readonly sockets = new Set<net.Socket>();
  /** Every question received, oldest first (`name` normalised). */
  readonly queries: Array<{ name: string; type: string; transport: 'udp' | 'tcp' }> = [];

  private constructor(
    private readonly udp: dgram.Socket,
    private readonly tcp: net.Server,
    readonly port: number,
  ) {}

  /** Starts on 127.0.0.1 with a port free for both UDP and TCP. */
  static async start(): Promise<DnsTestServer> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const udp = dgram.createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(0, '127.0.0.1', () => resolve());
      });
      const port = udp.address().port;
      const tcp = net.createServer();
      const listening = await new Promise<boolean>((resolve) => {
        tcp.once('error', () => resolve(false));
        tcp.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (!listening) {
        udp.close();
        continue;
      }
      const server = new DnsTestServer(udp, tcp, port);
      server.listen();
      return server;
    }
    throw new Error('could not find a port free for both UDP and TCP on 127.0.0.1');
  }

  /** `host:port`, as resolvers and DNS_SERVERS take it. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Replaces every record at `name`. */
  set(name: string, records: readonly DnsTestRecord[]): void {
    this.records.set(normalize(name), [...records]);
  }

  /**
   * Publishes the records a domain's record shows (`dns_records`: TXT, CNAME, MX), as its owner
   * would, replacing what each of those hosts had.
   */
  publish(records: readonly DnsRecord[]): void {
    const byHost = new Map<string, DnsTestRecord[]>();
    for (const record of records) {
      byHost.set(record.host, [...(byHost.get(record.host) ?? []), testRecordOf(record)]);
    }
    for (const [host, hostRecords] of byHost) this.set(host, hostRecords);
  }

  /** Adds one record at `name`, keeping the others. */
  add(name: string, record: DnsTestRecord): void {
    const key = normalize(name);
    this.records.set(key, [...(this.records.get(key) ?? []), record]);
  }

  /** Removes the records of `type` at `name`, or all of them. */
  remove(name: string, type?: DnsTestRecord['type']): void {
    const key = normalize(name);
    if (type === undefined) {
      this.records.delete(key);
      return;
    }
    const kept = (this.records.get(key) ?? []).filter((record) => record.type !== type);
    if (kept.length > 0) this.records.set(key, kept);
    else this.records.delete(key);
  }

  /** Makes queries for `name` fail in the given way until heal(). */
  fail(name: string, failure: DnsFailure): void {
    this.failures.set(normalize(name), failure);
  }

  heal(name: string): void {
    this.failures.delete(normalize(name));
  }

  /** Forgets every record and failure. */
  reset(): void {
    this.records.clear();
    this.failures.clear();
    this.queries.length = 0;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([
      new Promise<void>((resolve) => this.udp.close(() => resolve())),
      new Promise<void>((resolve) => this.tcp.close(() => resolve())),
    ]);
  }

  private listen(): void {
    this.udp.on('message', (message, remote) => {
      const response = this.respond(message, 'udp');
      if (response) this.udp.send(response, remote.port, remote.address);
    });
    this.tcp.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        if (pending.length > MAX_TCP_BUFFER) {
          socket.destroy();
          return;
        }
        while (pending.length >= 2) {
          const length = pending.readUInt16BE(0);
          if (pending.length < 2 + length) break;
          const message = pending.subarray(2, 2 + length);
          pending = pending.subarray(2 + length);
          const response = this.respond(message, 'tcp');
          if (!response) continue;
          const framed = Buffer.alloc(2 + response.length);
          framed.writeUInt16BE(response.length, 0);
          response.copy(framed, 2);
          socket.write(framed);
        }
      });
    });
  }

  /** The encoded answer, or null to stay silent. */
  private respond(message: Buffer, transport: 'udp' | 'tcp'): Buffer | null {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return null;
    }
    const question = query.questions?.[0];
    if (!question) return null;
    const name = normalize(question.name);
    this.queries.push({ name, type: question.type, transport });

    const base = {
      type: 'response' as const,
      id: query.id ?? 0,
      questions: [question],
    };
    const flags =
      dnsPacket.AUTHORITATIVE_ANSWER |
      dnsPacket.RECURSION_AVAILABLE |
      (query.flag_rd ? dnsPacket.RECURSION_DESIRED : 0);

    const failure = this.failures.get(name);
    if (failure === 'timeout') return null;
    if (failure === 'servfail') return dnsPacket.encode({ ...base, flags: flags | SERVFAIL });
    if (failure === 'refused') return dnsPacket.encode({ ...base, flags: flags | REFUSED });

    const answers = this.answersFor(name, question.type);
    if (answers === null) return null;
    const rcode = answers.length === 0 && !this.nameExists(name) ? NXDOMAIN : 0;
    const response = dnsPacket.encode({ ...base, flags: flags | rcode, answers });
    if (transport === 'udp' && response.length > udpLimit(query)) {
      return dnsPacket.encode({ ...base, flags: flags | dnsPacket.TRUNCATED_RESPONSE });
    }
    return response;
  }

  /** Records of `type` at `name`, chasing CNAMEs as a recursive resolver does; null: time out. */
  private answersFor(name: string, type: string): dnsPacket.Answer[] | null {
    const answers: dnsPacket.Answer[] = [];
    let current = name;
    for (let hop = 0; hop <= MAX_CNAME_CHASE; hop++) {
      if (hop > 0 && this.failures.get(current) === 'timeout') return null;
      const here = this.records.get(current) ?? [];
      const matching = here.filter((record) => record.type === type);
      if (matching.length > 0) {
        return [...answers, ...matching.map((record) => toAnswer(current, record))];
      }
      const cname = here.find(
        (record): record is Extract<DnsTestRecord, { type: 'CNAME' }> => record.type === 'CNAME',
      );
      if (!cname || type === 'CNAME') return answers;
      answers.push(toAnswer(current, cname));
      current = normalize(cname.target);
    }
    return answers;
  }

  /** Whether the name holds records or has names below it (an empty non-terminal). */
  private nameExists(name: string): boolean {
    if (this.records.has(name)) return true;
    const suffix = `.${name}`;
    for (const known of this.records.keys()) if (known.endsWith(suffix)) return true;
    return false;
  }
}

function udpLimit(query: dnsPacket.DecodedPacket): number {
  const opt = query.additionals?.find(
    (record): record is dnsPacket.OptAnswer => record.type === 'OPT',
  );
  return Math.max(CLASSIC_UDP_LIMIT, opt?.udpPayloadSize ?? CLASSIC_UDP_LIMIT);
}

/** The record a customer would publish for one of a domain's `dns_records`. */
export function testRecordOf(record: DnsRecord): DnsTestRecord {
  switch (record.type) {
    case 'TXT':
      return { type: 'TXT', value: record.content };
    case 'CNAME':
      return { type: 'CNAME', target: record.content };
    case 'MX': {
      const [priority, exchange] = record.content.split(/\s+/);
      return { type: 'MX', exchange: exchange ?? '', priority: Number(priority) };
    }
  }
}
