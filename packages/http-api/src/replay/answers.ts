/** A client-chosen id on a replay control, echoed on the status event that answers it. */
export type ControlId = string | number;

/**
 * The answer a replay owes to a control that carried an id: one status event with that id, sent once the control has
 * taken effect. Most controls take effect later than they are handled (the player starts, pauses and steps on its own
 * loop), so the session says what "in effect" means for each control with a `ready` test, and puts the id on the
 * first status it sends while that test holds.
 *
 * At most one answer is owed at a time: the session pays (`flush`) a still-owed answer as the next control starts,
 * so answers always come in the order of their controls and no id is answered twice or never.
 */
export class Answers {
  private owed: { id: ControlId; ready: () => boolean } | undefined;

  /** Owes `id` (if any) an answer once `ready()` holds. */
  owe(id: ControlId | undefined, ready: () => boolean): void {
    if (id !== undefined) this.owed = { id, ready };
  }

  /** The id to put on the status being sent now, when its control has taken effect (or `flush`); it is then paid. */
  take(flush = false): ControlId | undefined {
    const owed = this.owed;
    if (!owed || !(flush || owed.ready())) return undefined;
    this.owed = undefined;
    return owed.id;
  }

  /** Forgets the owed answer: its control failed, and the error event carries the id instead. */
  drop(): void {
    this.owed = undefined;
  }
}
