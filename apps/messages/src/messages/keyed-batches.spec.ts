import { KeyedBatches } from './keyed-batches';

/** A question whose answer the test gives when it wants. */
interface Asked {
  key: string;
  items: string[];
  answer: (value: string) => void;
  fail: (error: Error) => void;
}

function setup(maxItems = 10) {
  const asked: Asked[] = [];
  const batches = new KeyedBatches<string, string>(
    (key, items) =>
      new Promise<string>((resolve, reject) => {
        asked.push({ key, items, answer: resolve, fail: reject });
      }),
    maxItems,
  );
  return { asked, batches };
}

/** Lets the promise callbacks queued so far run. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
}

describe('KeyedBatches', () => {
  it('asks at once when nothing of the key is in flight', () => {
    const { asked, batches } = setup();
    void batches.submit('a', ['1']);
    void batches.submit('b', ['2']);
    expect(asked.map(({ key, items }) => [key, items])).toEqual([
      ['a', ['1']],
      ['b', ['2']],
    ]);
  });

  it('asks for the callers that waited together, once the question in flight ends', async () => {
    const { asked, batches } = setup();
    const first = batches.submit('a', ['1']);
    const second = batches.submit('a', ['2', '3']);
    const third = batches.submit('a', ['4']);
    expect(asked).toHaveLength(1);

    asked[0]?.answer('first answer');
    await expect(first).resolves.toBe('first answer');
    await settle();
    expect(asked.map(({ items }) => items)).toEqual([['1'], ['2', '3', '4']]);
    asked[1]?.answer('shared answer');
    await expect(Promise.all([second, third])).resolves.toEqual(['shared answer', 'shared answer']);
    await settle();
    expect(batches.inFlight).toBe(0);
  });

  it('puts at most maxItems items in a question, a larger caller alone', async () => {
    const { asked, batches } = setup(3);
    void batches.submit('a', ['0']);
    void batches.submit('a', ['1', '2']);
    void batches.submit('a', ['3', '4']);
    void batches.submit('a', ['5', '6', '7', '8']);
    for (let question = 0; question < 3; question += 1) {
      asked[question]?.answer('ok');
      await settle();
    }
    expect(asked.map(({ items }) => items)).toEqual([
      ['0'],
      ['1', '2'],
      ['3', '4'],
      ['5', '6', '7', '8'],
    ]);
  });

  it('fails every caller of a failed question and goes on with those that waited', async () => {
    const { asked, batches } = setup();
    const first = batches.submit('a', ['1']);
    const second = batches.submit('a', ['2']);
    asked[0]?.fail(new Error('unavailable'));
    await expect(first).rejects.toThrow('unavailable');
    await settle();
    asked[1]?.answer('recovered');
    await expect(second).resolves.toBe('recovered');
  });

  it('fails its callers when asking throws at once', async () => {
    const batches = new KeyedBatches<string, string>(() => {
      throw new Error('no bus');
    }, 10);
    await expect(batches.submit('a', ['1'])).rejects.toThrow('no bus');
    await settle();
    expect(batches.inFlight).toBe(0);
  });
});
