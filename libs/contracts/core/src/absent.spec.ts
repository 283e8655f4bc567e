import { instanceToPlain, Type } from 'class-transformer';
import { IsDefined, IsIn, IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';

import { EmptyAsAbsent, NullAsAbsent } from './absent';
import { validatePayload } from './validation';

// Fixtures local to this library; the real request classes are exercised in their own libs.
class Part {
  @EmptyAsAbsent() @IsOptional() @IsIn(['inline', 'attachment']) disposition?: string;
  @IsString() name!: string;
}

class Send {
  @EmptyAsAbsent() @IsOptional() @IsIn(['deliver', 'bounce']) result?: string;
  @NullAsAbsent() @IsOptional() @IsString() about?: string;
  @NullAsAbsent() @IsOptional() @IsInt() days?: number;
  @NullAsAbsent() @IsOptional() @ValidateNested() @Type(() => Part) part?: Part;
  @EmptyAsAbsent() @IsDefined() @IsString() subject!: string;
}

function valueOf(plain: unknown): Send {
  const result = validatePayload(Send, plain);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

describe('EmptyAsAbsent', () => {
  it('reads "" and null as absent, where "" would fail the field', () => {
    expect(validatePayload(Send, { subject: 's', result: 'fail' }).ok).toBe(false);
    expect(valueOf({ subject: 's', result: '' }).result).toBeUndefined();
    expect(valueOf({ subject: 's', result: null }).result).toBeUndefined();
    expect(valueOf({ subject: 's', result: 'bounce' }).result).toBe('bounce');
  });

  it('applies inside nested objects and arrays of them', () => {
    const value = valueOf({ subject: 's', part: { name: 'a', disposition: '' } });
    expect(value.part).toBeInstanceOf(Part);
    expect(value.part?.disposition).toBeUndefined();
    expect(value.part?.name).toBe('a');
  });

  it('makes "" a missing value of a required field', () => {
    const result = validatePayload(Send, { subject: '' });
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.message).toContain('subject should not be null or undefined');
  });

  it('leaves other values alone, whitespace and falsy ones included', () => {
    expect(valueOf({ subject: ' ' }).subject).toBe(' ');
    expect(validatePayload(Send, { subject: 's', result: 0 }).ok).toBe(false);
    expect(validatePayload(Send, { subject: 's', result: false }).ok).toBe(false);
  });
});

describe('NullAsAbsent', () => {
  it('reads null as absent', () => {
    const value = valueOf({ subject: 's', about: null, days: null, part: null });
    expect(value.about).toBeUndefined();
    expect(value.days).toBeUndefined();
    expect(value.part).toBeUndefined();
  });

  it('keeps "" as a value', () => {
    expect(valueOf({ subject: 's', about: '' }).about).toBe('');
  });

  it('still rejects a wrong type', () => {
    expect(validatePayload(Send, { subject: 's', days: '' }).ok).toBe(false);
  });
});

describe('serialised for the bus', () => {
  it('leaves an absent field out of the JSON', () => {
    const value = valueOf({ subject: 's', result: '', about: null, part: { name: 'a' } });
    expect(JSON.parse(JSON.stringify(value))).toEqual({ subject: 's', part: { name: 'a' } });
    expect(instanceToPlain(valueOf({ subject: 's', about: 'x' }))).toMatchObject({ about: 'x' });
  });
});
