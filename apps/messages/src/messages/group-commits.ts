import { combinedInsertStatement, type InsertStatement, statementsShape } from './insert-rows';
import { KeyedBatches } from './keyed-batches';

/** One caller's statements and note, and how running them ended for it. */
interface Pending<Note> {
  statements: readonly InsertStatement[];
  note: Note | undefined;
  /** Set when its statements were not committed. */
  failure?: { error: unknown };
}

export interface GroupCommitsOptions<Note> {
  /** Groups in flight at once. */
  lanes: number;
  maxCallersPerGroup: number;
  /**
   * What a group adds for its callers' notes (one statement for many, such as the events of what
   * they stored), committed with their statements and ahead of them (a merged table's rows come
   * first); a caller that runs alone gets it for its own.
   */
  groupStatements: (notes: readonly Note[]) => InsertStatement[];
  /**
   * The callers of one turn of the event loop (the submissions of one request) are gathered
   * first and go to a lane together, rather than the first ones each alone in an idle lane.
   */
  gatherTurn?: boolean;
}

/**
 * The callers ordered by the shapes of their statements, so that a group's text depends on which
 * shapes it holds, not on their order: prepared statements stay few.
 */
function inShapeOrder<Note>(group: readonly Pending<Note>[]): Pending<Note>[] {
  const shaped = group.map((pending) => ({ pending, shape: statementsShape(pending.statements) }));
  shaped.sort((a, b) => (a.shape < b.shape ? -1 : a.shape > b.shape ? 1 : 0));
  return shaped.map(({ pending }) => pending);
}

/**
 * Commits INSERT statements that each caller needs atomic (see combinedInsertStatement), several
 * callers' in one statement when they come together: a caller that finds a lane idle runs at
 * once; those that come while every lane has a statement in flight wait for the lane with the
 * fewest waiting, then go together. One round trip and one commit for many under load, no delay
 * when idle. A caller's promise settles only once its own statements are committed (or not): when
 * a group's statement fails (one caller's duplicate key fails them all), each caller's statements
 * run again alone, so that each gets its own outcome.
 */
export class GroupCommits<Note> {
  private readonly batches: KeyedBatches<Pending<Note>, void>;
  private readonly lanes: readonly string[];
  /** The callers of this turn so far, and when they were committed (see gatherTurn). */
  private gathering: { callers: Array<Pending<Note>>; committed: Promise<void> } | undefined;

  constructor(
    private readonly execute: (statement: InsertStatement) => Promise<unknown>,
    private readonly options: GroupCommitsOptions<Note>,
  ) {
    this.lanes = Array.from({ length: Math.max(1, options.lanes) }, (_, index) => String(index));
    this.batches = new KeyedBatches(
      (_lane, group) => this.commitGroup(group),
      options.maxCallersPerGroup,
    );
  }

  /** Commits `statements`, and what the group adds for `note` when given. */
  async commit(statements: readonly InsertStatement[], note?: Note): Promise<void> {
    const pending: Pending<Note> = { statements, note };
    await (this.options.gatherTurn
      ? this.gathered(pending)
      : this.batches.submit(this.lane(), [pending]));
    if (pending.failure) throw pending.failure.error;
  }

  /** Settles once the callers of this turn are committed, each at most maxCallersPerGroup. */
  private gathered(pending: Pending<Note>): Promise<void> {
    if (!this.gathering) {
      const callers: Array<Pending<Note>> = [];
      const committed = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        this.gathering = undefined;
        const size = this.options.maxCallersPerGroup;
        const groups = Array.from({ length: Math.ceil(callers.length / size) }, (_, index) =>
          callers.slice(index * size, (index + 1) * size),
        );
        await Promise.all(groups.map((group) => this.batches.submit(this.lane(), group)));
      });
      this.gathering = { callers, committed };
    }
    this.gathering.callers.push(pending);
    return this.gathering.committed;
  }

  /** An idle lane, else the one with the fewest callers waiting. */
  private lane(): string {
    let chosen = this.lanes[0] ?? '0';
    let fewest = Number.POSITIVE_INFINITY;
    for (const lane of this.lanes) {
      const waiting = this.batches.waiting(lane);
      if (waiting === undefined) return lane;
      if (waiting < fewest) {
        fewest = waiting;
        chosen = lane;
      }
    }
    return chosen;
  }

  private async commitGroup(group: Pending<Note>[]): Promise<void> {
    if (group.length > 1) {
      try {
        await this.run(inShapeOrder(group));
        return;
      } catch {
        // Nothing of the group was committed: each caller's statements run alone below.
      }
    }
    await Promise.all(
      group.map(async (pending) => {
        try {
          await this.run([pending]);
        } catch (error) {
          pending.failure = { error };
        }
      }),
    );
  }

  private async run(callers: readonly Pending<Note>[]): Promise<void> {
    const notes = callers.flatMap(({ note }) => (note === undefined ? [] : [note]));
    const combined = combinedInsertStatement([
      ...(notes.length > 0 ? this.options.groupStatements(notes) : []),
      ...callers.flatMap(({ statements }) => statements),
    ]);
    if (combined) await this.execute(combined);
  }
}
