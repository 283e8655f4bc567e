import { isEmail } from 'class-validator';

import {
  DISPLAY_NAME_MAX_LENGTH,
  EMAIL_MAX_LENGTH,
  RECIPIENTS_MAX,
  RECIPIENTS_MIN,
} from './limits';

/** A recipient as the contract classes hold it (RecipientBody; AddressBody without substitutions). */
export interface CheckedRecipient {
  email: string;
  name?: string;
  substitutions?: Record<string, unknown>;
}

const ADDRESS_KEYS: ReadonlySet<string> = new Set(['email', 'name']);
const RECIPIENT_KEYS: ReadonlySet<string> = new Set([...ADDRESS_KEYS, 'substitutions']);

function isFields(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One recipient of the common shapes, as class-transformer and class-validator would make it of
 * RecipientBody (or AddressBody, whose `keys` have no substitutions): an email (`@IsEmail`, at
 * most EMAIL_MAX_LENGTH UTF-16 units, stricter than the decorator's code points), a name (`""` and
 * null absent) and substitutions (null absent), and no other key (whitelisting is left to
 * class-validator). Undefined for anything else.
 */
function recipientOf<R extends CheckedRecipient>(
  value: unknown,
  make: () => R,
  keys: ReadonlySet<string>,
): R | undefined {
  if (!isFields(value)) return undefined;
  for (const key of Object.keys(value)) if (!keys.has(key)) return undefined;
  const { email, name, substitutions } = value;
  if (typeof email !== 'string' || email.length > EMAIL_MAX_LENGTH || !isEmail(email)) {
    return undefined;
  }
  const recipient = make();
  recipient.email = email;
  if (typeof name === 'string' && name !== '') {
    if (name.length > DISPLAY_NAME_MAX_LENGTH) return undefined;
    recipient.name = name;
  } else if (name !== undefined && name !== null && name !== '') {
    return undefined;
  }
  if (isFields(substitutions)) recipient.substitutions = substitutions;
  else if (substitutions !== undefined && substitutions !== null) return undefined;
  return recipient;
}

function checkedList<R extends CheckedRecipient>(
  value: unknown,
  make: () => R,
  keys: ReadonlySet<string>,
): R[] | undefined {
  if (!Array.isArray(value) || value.length < RECIPIENTS_MIN || value.length > RECIPIENTS_MAX) {
    return undefined;
  }
  const recipients: R[] = [];
  for (const item of value) {
    const recipient = recipientOf(item, make, keys);
    if (recipient === undefined) return undefined;
    recipients.push(recipient);
  }
  return recipients;
}

/**
 * A send's `recipients` checked by hand (class-validator's checks of 100 recipients were most of
 * the cost of validating a send, at the gateway and again in the messages service): the
 * recipients made with `make` when the array and every recipient certainly pass the contract's
 * decorators, else undefined (class-validator then checks them and words what is wrong).
 */
export function checkedRecipients<R extends CheckedRecipient>(
  value: unknown,
  make: () => R,
): R[] | undefined {
  return checkedList(value, make, RECIPIENT_KEYS);
}

/** {@link checkedRecipients} for v1's recipients: addresses, without substitutions. */
export function checkedAddresses<R extends CheckedRecipient>(
  value: unknown,
  make: () => R,
): R[] | undefined {
  return checkedList(value, make, ADDRESS_KEYS);
}
