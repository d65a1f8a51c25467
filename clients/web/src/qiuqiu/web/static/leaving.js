// The tables whose seat asked to stand up, until `table_left` answers. The server's
// snapshot does not say a request stands, so they are kept in localStorage: a reload,
// or another tab of the account taking the game over, still shows the seat leaving,
// asks again (answered by that `table_left`, PROTOCOL.md `leave_table`), and says
// "You left" rather than that the server stood the seat up.

const KEY = "qiuqiu.leaving";

/**
 * A request to stand up: after the hand in play, or at once; `handId` is the hand in
 * play (or the last) when it was asked, so a later one dealt to the seat tells it was lost.
 * @typedef {{afterHand: boolean, handId: number}} Leaving
 */

export class LeaveBook {
  /** @param {Storage} storage */
  constructor(storage) {
    this.storage = storage;
  }

  /** @returns {Record<string, Leaving>} */
  all() {
    try {
      return JSON.parse(this.storage.getItem(KEY) ?? "{}") ?? {};
    } catch {
      return {}; // A damaged entry forgets the requests: the server keeps them.
    }
  }

  /** @param {string} tableId @returns {Leaving | undefined} */
  get(tableId) {
    return this.all()[tableId];
  }

  /** @param {string} tableId */
  has(tableId) {
    return tableId in this.all();
  }

  /** @param {string} tableId @param {Leaving} leaving */
  set(tableId, leaving) {
    this.storage.setItem(KEY, JSON.stringify({ ...this.all(), [tableId]: leaving }));
  }

  /** @param {string} tableId */
  delete(tableId) {
    const all = this.all();
    delete all[tableId];
    this.storage.setItem(KEY, JSON.stringify(all));
  }

  keys() {
    return Object.keys(this.all());
  }
}

/** Whether `a` and `b` are the same request. @param {Leaving | undefined} a @param {Leaving} b */
export const sameLeaving = (a, b) => a !== undefined && a.afterHand === b.afterHand && a.handId === b.handId;
