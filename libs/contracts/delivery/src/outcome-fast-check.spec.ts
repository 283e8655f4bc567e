import { fastOutcomePayload } from './outcome-fast-check';
import { validateOutcomePayload } from './outcome-payload';

type Data = Record<string, unknown>;

const ATTEMPT = {
  time: '2030-01-01T00:00:01.123Z',
  remote_host: 'mx.recipient.test',
  reply: '250 2.0.0 ok',
  status: 'Delivered',
  attempt: 1,
};

const RECIPIENT = {
  email: 'to@recipient.test',
  result: 'bounced',
  remote_host: 'mx.recipient.test',
  reply: '550 5.1.1 unknown',
  bounce_classification: 'hard',
};

/** `data` of a delivery event as the delivery service publishes it. */
function published(): Data {
  return {
    account_id: '5f0c6f7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f',
    event: 'on_delivered',
    from: 'hello@sender.test',
    recipient: 'to@recipient.test',
    subject: 'Hi',
    message_id_header: '<0190f5c2-6c1e-7a3b-8c4d-1234567890ab@sender.test>',
    id: '0190f5c2-6c1e-7a3b-8c4d-1234567890ab',
    is_bot: false,
    status: 'Delivered',
    attempt: { ...ATTEMPT },
    sandbox: false,
    recipients: [{ ...RECIPIENT }],
  };
}

/** Values of every kind a field may wrongly (or rightly) hold. */
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  '',
  'x',
  0,
  1,
  1.5,
  -1,
  true,
  false,
  [],
  {},
  ['on_delivered'],
  'Delivered',
  'hard',
  'retries_exhausted',
  'on_failed',
  '2030-01-01T00:00:01Z',
  '2030-01-01 00:00:01',
  '0190F5C2-6C1E-7A3B-8C4D-1234567890AB',
  '0190f5c2-6c1e-7a3b-8c4d-1234567890a',
  { ...ATTEMPT },
  [{ ...RECIPIENT }],
];

function withField(base: Data, path: readonly (string | number)[], value: unknown): Data {
  const copy = structuredClone(base);
  let target: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] ?? '';
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

const FIELDS: ReadonlyArray<readonly (string | number)[]> = [
  ...Object.keys(published()).map((key) => [key]),
  ...Object.keys(ATTEMPT).map((key) => ['attempt', key]),
  ...Object.keys(RECIPIENT).map((key) => ['recipients', 0, key]),
  ['recipients', 1],
  ['unknown'],
  ['attempt', 'unknown'],
  ['recipients', 0, 'unknown'],
];

/** Every published event with one field changed to each odd value (or removed). */
function variants(): Data[] {
  return FIELDS.flatMap((path) => ODD_VALUES.map((value) => withField(published(), path, value)));
}

describe('fastOutcomePayload', () => {
  it('takes an event as the delivery service publishes it, and the legacy shape', () => {
    expect(fastOutcomePayload(published())).toBeDefined();
    expect(fastOutcomePayload(withField(published(), ['recipients'], undefined))).toBeDefined();
    expect(fastOutcomePayload(withField(published(), ['is_bot'], undefined))).toBeDefined();
  });

  it('accepts only what the contract class accepts, and answers what it answers', () => {
    let taken = 0;
    for (const data of variants()) {
      const fast = fastOutcomePayload(data);
      const validated = validateOutcomePayload(data);
      if (fast === undefined) continue;
      taken += 1;
      expect(validated.ok).toBe(true);
      if (!validated.ok) continue;
      // Same fields with the same values, nested ones included (JSON keeps no class nor undefined).
      expect(JSON.parse(JSON.stringify(fast))).toStrictEqual(
        JSON.parse(JSON.stringify(validated.value)),
      );
      expect(Object.keys(fast).sort()).toEqual(Object.keys(validated.value).sort());
    }
    expect(taken).toBeGreaterThan(50);
  });
});
