import { FirstAttempt, LateAttempts } from './first-attempt';

describe('LateAttempts', () => {
  it('holds a target while any of its late attempts runs', async () => {
    const late = new LateAttempts();
    const first = new FirstAttempt<string>();
    const second = new FirstAttempt<string>();
    late.add('route', first);
    late.add('route', second);
    expect(late.has('route')).toBe(true);
    expect(late.has('other')).toBe(false);
    first.end('done');
    await first.ended;
    expect(late.has('route')).toBe(true);
    second.end(null);
    await second.ended;
    expect(late.has('route')).toBe(false);
  });
});
