import { canonicalizeAllowList } from '@envoi/shared-net';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, ValidateBy } from 'class-validator';

/*
 * The outbound-request settings (webhooks now, inbound routes later), declared by each service
 * that makes such requests: `@OutboundAllowHttp() OUTBOUND_ALLOW_HTTP = false;` and
 * `@OutboundAllowCidrs() OUTBOUND_ALLOW_CIDRS = '';`. Production defaults deny both; the local
 * platform (`npm start`, e2e) allows http and loopback. `outboundPolicyOf` in
 * libs/shared/outbound turns them into a policy.
 */

const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false };

/** OUTBOUND_ALLOW_HTTP: `true` lets targets use plain http:// (development); https only otherwise. */
export function OutboundAllowHttp(): PropertyDecorator {
  const bottomUp = [
    IsBoolean({ message: 'OUTBOUND_ALLOW_HTTP must be true or false' }),
    // The raw text: implicit conversion would already have made any non-empty string `true`.
    Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => {
      const raw = obj[key];
      return typeof raw === 'string' ? (BOOLEAN_TEXT[raw.trim().toLowerCase()] ?? raw) : raw;
    }),
    IsOptional(),
  ];
  return (target, propertyKey) => {
    for (const decorate of bottomUp) decorate(target, propertyKey);
  };
}

function isCidrList(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const entries = value.split(',').filter((entry) => entry.trim() !== '');
  try {
    canonicalizeAllowList(entries);
    return true;
  } catch {
    return false;
  }
}

/**
 * OUTBOUND_ALLOW_CIDRS: comma-separated CIDRs that targets may reach although private, loopback
 * or reserved (e.g. `127.0.0.0/8,::1/128`); empty denies them all. A list covering every address
 * is refused.
 */
export function OutboundAllowCidrs(): PropertyDecorator {
  const bottomUp = [
    ValidateBy({
      name: 'isCidrList',
      validator: {
        validate: isCidrList,
        defaultMessage: () =>
          'OUTBOUND_ALLOW_CIDRS must be CIDRs separated by commas, at most 100, not covering every address',
      },
    }),
    IsOptional(),
  ];
  return (target, propertyKey) => {
    for (const decorate of bottomUp) decorate(target, propertyKey);
  };
}
