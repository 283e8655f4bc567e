import 'reflect-metadata';

import { Type } from 'class-transformer';
import {
  getMetadataStorage,
  IsInt,
  IsString,
  MetadataStorage,
  ValidateNested,
  validateSync,
} from 'class-validator';

import { cacheValidationMetadata } from './validation-metadata-cache';

class Line {
  @IsInt() quantity!: number;
}

class Order {
  @IsString() reference!: string;
  @ValidateNested() @Type(() => Line) line!: Line;
  extra?: unknown;
}

function order(reference: unknown, quantity: unknown, extra?: unknown): Order {
  const line = Object.assign(new Line(), { quantity });
  return Object.assign(new Order(), { reference, line, extra });
}

function failedProperties(value: Order): string[] {
  return validateSync(value).flatMap((error) => [
    error.property,
    ...(error.children ?? []).map((child) => `${error.property}.${child.property}`),
  ]);
}

describe('cacheValidationMetadata', () => {
  cacheValidationMetadata();

  it('validates as class-validator does, nested objects included', () => {
    expect(failedProperties(order('A-1', 3))).toEqual([]);
    expect(failedProperties(order(7, 3))).toEqual(['reference']);
    expect(failedProperties(order('A-1', 'three'))).toEqual(['line', 'line.quantity']);
  });

  it('sees a constraint registered after a class was validated', () => {
    expect(failedProperties(order('A-1', 3, 5))).toEqual([]);
    IsString()(Order.prototype, 'extra');
    expect(failedProperties(order('A-1', 3, 5))).toEqual(['extra']);
  });

  it('looks a class up once per set of options', () => {
    const storage = new MetadataStorage();
    for (const metadata of getMetadataStorage().getTargetValidationMetadatas(
      Line,
      '',
      false,
      false,
    )) {
      storage.addValidationMetadata(metadata);
    }
    const lookUp = jest.spyOn(storage, 'getTargetValidationMetadatas');
    cacheValidationMetadata(storage);
    cacheValidationMetadata(storage);

    const first = storage.getTargetValidationMetadatas(Line, '', false, false);
    expect(storage.getTargetValidationMetadatas(Line, '', false, false)).toBe(first);
    expect(first).toHaveLength(1);
    storage.getTargetValidationMetadatas(Line, '', false, false, ['admin']);
    expect(lookUp).toHaveBeenCalledTimes(2);
  });
});
