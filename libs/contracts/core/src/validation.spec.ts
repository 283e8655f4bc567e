import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  ValidateNested,
  validateSync,
} from 'class-validator';

import {
  checkFastFirst,
  formatValidationErrors,
  SkipWhenFastChecked,
  validatePayload,
} from './validation';

// Fixtures local to this library (contracts-core may not depend on domain contracts); the real
// request classes are exercised in libs/contracts/accounts/src/requests.spec.ts.
class Settings {
  @IsOptional() @IsString() @MaxLength(5) name?: string;
  @IsOptional() @IsInt() @Max(30) retention?: number;
}

class Body {
  @IsString() @Length(1, 10) label!: string;
  @IsArray() @ArrayMinSize(1) @IsString({ each: true }) tags!: string[];
}

class Request {
  @IsUUID() account_id!: string;
  @ValidateNested() @Type(() => Settings) changes!: Settings;
}

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';

/** The message of a failed validation; fails the test when validation succeeds. */
function failure(result: ReturnType<typeof validatePayload>): string {
  if (result.ok) throw new Error('expected validation to fail');
  return result.message;
}

describe('validatePayload', () => {
  it('returns an instance of the contract class', () => {
    const result = validatePayload(Body, { label: 'x', tags: ['a'] });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toBeInstanceOf(Body);
    expect({ ...result.value }).toEqual({ label: 'x', tags: ['a'] });
  });

  it('strips unknown fields instead of rejecting them', () => {
    const result = validatePayload(Body, { label: 'x', tags: ['a'], is_admin: true });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.keys(result.value).sort()).toEqual(['label', 'tags']);
  });

  it('strips unknown fields of nested objects, typed as their class', () => {
    const result = validatePayload(Request, {
      account_id: ACCOUNT_ID,
      changes: { name: 'n', owner: 'x' },
      extra: 1,
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.keys(result.value).sort()).toEqual(['account_id', 'changes']);
    expect(result.value.changes).toBeInstanceOf(Settings);
    expect({ ...result.value.changes }).toEqual({ name: 'n' });
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['an array', [{ label: 'x', tags: ['a'] }]],
    ['an empty array', []],
    ['a string', '{"label":"x"}'],
    ['a number', 42],
    ['a boolean', true],
  ])('rejects %s as a body', (_name, plain) => {
    expect(validatePayload(Body, plain)).toEqual({
      ok: false,
      message: 'request body must be a JSON object',
    });
  });

  it('joins every failed constraint with "; "', () => {
    expect(failure(validatePayload(Body, { label: '', tags: [] })).split('; ')).toEqual(
      expect.arrayContaining([
        'label must be longer than or equal to 1 characters',
        'tags must contain at least 1 elements',
      ]),
    );
  });

  it('reports missing required fields', () => {
    const message = failure(validatePayload(Body, {}));
    expect(message).toContain('label must be a string');
    expect(message).toContain('tags must be an array');
  });

  it('does not coerce types', () => {
    const message = failure(validatePayload(Body, { label: 5, tags: ['a', 1] }));
    expect(message).toContain('label must be a string');
    expect(message).toContain('each value in tags must be a string');
  });

  it('prefixes nested failures with their path', () => {
    const message = failure(
      validatePayload(Request, {
        account_id: ACCOUNT_ID,
        changes: { name: 'toolong', retention: 31 },
      }),
    );
    expect(message.split('; ')).toEqual([
      'changes.name must be shorter than or equal to 5 characters',
      'changes.retention must not be greater than 30',
    ]);
  });

  it('reports failures at both levels together', () => {
    const message = failure(
      validatePayload(Request, { account_id: 'nope', changes: { retention: 1.5 } }),
    );
    expect(message).toContain('account_id must be a UUID');
    expect(message).toContain('changes.retention must be an integer number');
  });

  it('reports a nested field that is not an object', () => {
    expect(failure(validatePayload(Request, { account_id: ACCOUNT_ID, changes: 'x' }))).toContain(
      'changes',
    );
  });
});

describe('formatValidationErrors', () => {
  it('keeps a message that does not start with the property name unchanged', () => {
    expect(
      formatValidationErrors(
        [{ property: 'tags', constraints: { each: 'each value in tags must be a string' } }],
        'key',
      ),
    ).toEqual(['each value in tags must be a string']);
  });

  it('replaces the leading property name with the full path, at any depth', () => {
    expect(
      formatValidationErrors([
        {
          property: 'a',
          children: [
            {
              property: 'b',
              children: [{ property: 'c', constraints: { isInt: 'c must be an integer number' } }],
            },
          ],
        },
      ]),
    ).toEqual(['a.b.c must be an integer number']);
  });

  it('answers nothing for no errors', () => {
    expect(formatValidationErrors([])).toEqual([]);
    const valid = Object.assign(new Body(), { label: 'l', tags: ['a'] });
    expect(formatValidationErrors(validateSync(valid))).toEqual([]);
  });
});

class Item {
  @IsString() @MaxLength(3) code!: string;
}

class Order {
  @IsString() label!: string;

  @SkipWhenFastChecked()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Item)
  items!: Item[];
}

/** Items whose codes are all "ok" (a check stricter than the decorators); counts its calls. */
const fastCheck = { calls: 0 };
checkFastFirst(Order, 'items', (value) => {
  fastCheck.calls += 1;
  if (!Array.isArray(value) || !value.every((item) => isFields(item) && item.code === 'ok')) {
    return undefined;
  }
  return value.map(() => Object.assign(new Item(), { code: 'ok' }));
});

function isFields(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

describe('validatePayload with a fast check (checkFastFirst)', () => {
  it('takes the checked value as it is and still validates the other properties', () => {
    const before = fastCheck.calls;
    const result = validatePayload(Order, { label: 'l', items: [{ code: 'ok' }], extra: 1 });

    expect(fastCheck.calls).toBe(before + 1);
    expect(result).toEqual({ ok: true, value: { label: 'l', items: [{ code: 'ok' }] } });
    expect(result.ok && result.value).toBeInstanceOf(Order);
    expect(result.ok && result.value.items[0]).toBeInstanceOf(Item);
    expect(failure(validatePayload(Order, { label: 7, items: [{ code: 'ok' }] }))).toBe(
      'label must be a string',
    );
  });

  it('validates the whole payload with the decorators when the check refuses the value', () => {
    expect(validatePayload(Order, { label: 'l', items: [{ code: 'ab', more: 1 }] })).toEqual({
      ok: true,
      value: { label: 'l', items: [{ code: 'ab' }] },
    });
    expect(failure(validatePayload(Order, { label: 'l', items: [{ code: 'abcd' }] }))).toBe(
      'items.0.code must be shorter than or equal to 3 characters',
    );
    expect(failure(validatePayload(Order, { label: 'l', items: 'none' }))).toMatch(
      /^items must be an array/,
    );
  });

  it('runs the validators of a checked class built without validatePayload', () => {
    const item = Object.assign(new Item(), { code: 'abcd' });
    const order = Object.assign(new Order(), { label: 'l', items: [item] });

    expect(formatValidationErrors(validateSync(order))).toEqual([
      'items.0.code must be shorter than or equal to 3 characters',
    ]);
  });
});
