import { MessageSlots } from './message-slots';

/** A task that runs until released, counting how many run at once. */
function gatedTasks(count: number) {
  let running = 0;
  let most = 0;
  const releases: Array<() => void> = [];
  const started: number[] = [];
  const tasks = Array.from({ length: count }, (_, index) => async () => {
    running += 1;
    most = Math.max(most, running);
    started.push(index);
    await new Promise<void>((resolve) => releases.push(resolve));
    running -= 1;
    return index;
  });
  return { tasks, releases, started, most: () => most };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('message slots', () => {
  it('runs at most its size at once, the others in the order they came', async () => {
    const slots = new MessageSlots(2);
    const { tasks, releases, started, most } = gatedTasks(5);

    const results = Promise.all(tasks.map((task) => slots.run(task)));
    await settle();
    expect(started).toEqual([0, 1]);
    expect(slots.busy).toBe(2);

    for (let round = 0; round < 5 && releases.length > 0; round++) {
      releases.splice(0).forEach((release) => release());
      await settle();
    }
    await expect(results).resolves.toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most()).toBe(2);
    expect(slots.busy).toBe(0);
  });

  it('frees the slot of a task that fails', async () => {
    const slots = new MessageSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(() => Promise.resolve('next'))).resolves.toBe('next');
    expect(slots.busy).toBe(0);
  });
});
