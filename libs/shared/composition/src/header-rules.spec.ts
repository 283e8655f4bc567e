import { inlineContentId, unsafeHeaderText } from './header-rules';

describe('inlineContentId', () => {
  it.each([
    ['<logo@example.com>', 'logo@example.com'],
    ['logo@example.com', undefined],
    ['<logo', undefined],
    [undefined, undefined],
  ])('%s → %s', (contentId, expected) => {
    expect(inlineContentId(contentId)).toBe(expected);
  });
});

describe('unsafeHeaderText', () => {
  it('accepts plain text, tabs and U+2028', () => {
    expect(unsafeHeaderText('a\tb\u2028c ü')).toBeUndefined();
  });
});
