// The running figure of an evening: hands played, won and lost, the net, and the
// biggest pot won. Kept per browser tab (sessionStorage), so a reload keeps it.

export class Tally {
  constructor() {
    this.hands = 0;
    this.won = 0;
    this.lost = 0;
    this.net = 0;
    this.biggest = 0;
    /** @type {string[]} hands already counted (table and hand id), so a replayed event never counts twice */
    this.seen = [];
  }

  /** @param {string} key table and hand id @param {number} net @param {number} potWon 0 unless won */
  add(key, net, potWon) {
    if (this.seen.includes(key)) return;
    this.seen = [...this.seen.slice(-199), key];
    this.hands += 1;
    if (net > 0) this.won += 1;
    if (net < 0) this.lost += 1;
    this.net += net;
    this.biggest = Math.max(this.biggest, potWon);
  }

  /** @param {Storage} storage @param {string} key */
  save(storage, key) {
    storage.setItem(key, JSON.stringify(this));
  }

  /** @param {Storage} storage @param {string} key */
  static load(storage, key) {
    const tally = new Tally();
    try {
      Object.assign(tally, JSON.parse(storage.getItem(key) ?? "{}"));
    } catch {
      // A damaged entry starts the evening afresh.
    }
    return tally;
  }
}
