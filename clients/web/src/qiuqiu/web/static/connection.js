// The session with the server: one WebSocket, `hello` (resuming with the token
// kept in localStorage), requests matched to their replies by `id`, and
// reconnecting by itself with backoff when the connection drops. What the page
// does with the messages is up to `onMessage`; this module knows no table.

const PROTOCOL_VERSION = 2;

/** Waits before each reconnect attempt, in ms; the last one repeats. The server keeps
 * a seat for its grace period (60 s by default), so the first tries come quickly. */
const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];

/** How often a page the server refused by its origin asks again: the refusal stands until
 * its operator changes `--allowed-origins`, or the page is opened from elsewhere. */
const REFUSED_RETRY_MS = 30000;
/** How long the server may take to answer the look that tells a refusal from a server down. */
const PROBE_MS = 5000;

/** The close code of a session taken over by the same account in another tab or device. */
export const TAKEN_OVER = 4000;

/** Closes that retrying cannot mend by itself: the account was opened in another
 * tab or device, or this page flooded or sent an oversize frame. */
const FINAL_CLOSES = new Map([
  [TAKEN_OVER, "This account was opened in another tab or window."],
  [1008, "The server closed the connection: too many messages."],
  [1009, "The server closed the connection: a message was too large."],
]);

/** How the server's close for want of a `hello` in time begins its reason (PROTOCOL.md). */
const NO_HELLO = "no hello within";

/** Said of a name with nothing visible, refused by the server or, all spaces, by the page. */
export const NO_VISIBLE_NAME = "That name has no visible character: pick another name.";

/** What the sign-in card says of a name the server refused, in the page's words: the
 * server's speak of `hello` and tokens, which the player never sees. The form sends at
 * most 24 characters, so the one name it can send that is invalid has nothing visible. */
const NAME_REFUSALS = new Map([
  ["reserved_name", "That name is the dealer bot's: pick another name."],
  ["invalid_message", NO_VISIBLE_NAME],
  ["too_many_accounts", "Your address has opened as many new accounts as the server allows for now: try again later."],
]);

/** Refusals of a `hello` with a token that say to try again (PROTOCOL.md, "Errors"). */
const PASSING_REFUSALS = new Set(["store_unavailable", "unknown_account"]);

/**
 * @typedef {"connecting" | "need-name" | "online" | "reconnecting" | "refused" | "stopped"} Status
 * @typedef {{status: Status, detail: string, attempt: number, retryAt: number | null, code?: number}} StatusInfo
 */

/** A refused request: the server's `error`, as an exception. */
export class Refused extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** A request made with no connection open: it was never sent. */
export class NotConnected extends Error {}

export class Connection {
  /**
   * @param {string} url ws:// or wss://
   * @param {{onMessage: (message: any) => void, onWelcome: (welcome: any) => void,
   *          onStatus: (info: StatusInfo) => void, storage?: Storage}} handlers
   */
  constructor(url, { onMessage, onWelcome, onStatus, storage = localStorage }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onWelcome = onWelcome;
    this.onStatus = onStatus;
    this.storage = storage;
    /** @type {WebSocket | null} */
    this.ws = null;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (m: any) => void, reject: (e: Error) => void, message: Record<string, unknown>}>} */
    this.pending = new Map();
    /** @type {StatusInfo} */
    this.info = { status: "connecting", detail: "", attempt: 0, retryAt: null };
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.retryTimer = null;
    /** Set when the server no longer knew this page's account and a new one was opened. */
    this.forgotten = false;
    /** The name a new account is asked for under, until the server takes or refuses it:
     * kept only once taken, so that a refused one is not said again at the next load. */
    this.asked = "";
    /** How many sessions this page has had: more than one means it came back by itself. */
    this.sessions = 0;
    /** Handshakes refused by a server that answers, since the last one that opened. */
    this.refusals = 0;
    // A laptop waking up or a phone back on the network: try at once.
    addEventListener("online", () => this.retryNow());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.retryNow();
    });
  }

  get token() {
    return this.storage.getItem(`qiuqiu.token:${this.url}`);
  }

  set token(value) {
    const key = `qiuqiu.token:${this.url}`;
    if (value) this.storage.setItem(key, value);
    else this.storage.removeItem(key);
  }

  get name() {
    return this.storage.getItem("qiuqiu.name") ?? "";
  }

  /** @param {Status} status @param {string} [detail] */
  setStatus(status, detail = "") {
    this.info = { ...this.info, status, detail };
    this.onStatus(this.info);
  }

  open() {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.info.retryAt = null;
    if (this.info.attempt === 0) this.setStatus("connecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    let opened = false;
    ws.addEventListener("open", () => {
      opened = true;
      this.refusals = 0;
      this.greet();
    });
    ws.addEventListener("message", (event) => this.receive(event.data));
    ws.addEventListener("close", (event) => {
      if (this.ws !== ws) return;
      // A handshake the server answered with a refusal looks to a page like a server
      // that is down (no status, close code 1006): a plain request tells them apart.
      if (opened || event.code !== 1006) this.lost(event.code, event.reason);
      else this.answers().then((up) => (up ? this.refusedOnce() : this.lost(event.code, event.reason)));
    });
  }

  /** Whether the server answers HTTP: opaque, since it sends no CORS headers, but an answer. */
  async answers() {
    const url = new URL(this.url);
    url.protocol = url.protocol === "wss:" ? "https:" : "http:";
    url.pathname = "/healthz";
    try {
      await fetch(url, { mode: "no-cors", cache: "no-store", signal: AbortSignal.timeout(PROBE_MS) });
      return true;
    } catch {
      return false;
    }
  }

  /** The server answered, having refused the socket: at once again, since a server
   * that was starting may have come up in between; a second refusal is one. */
  refusedOnce() {
    if (this.refusals++ > 0) return this.refused();
    this.ws = null;
    this.open();
  }

  /** The server is up and refused this page's WebSocket: the only handshake it refuses
   * is one from an origin its `--allowed-origins` leaves out. */
  refused() {
    this.ws = null;
    const server = new URL(this.url);
    server.protocol = server.protocol === "wss:" ? "https:" : "http:";
    this.info.code = undefined;
    this.info.attempt += 1;
    this.info.retryAt = Date.now() + REFUSED_RETRY_MS;
    this.setStatus(
      "refused",
      `This server does not accept connections from this page's origin (${location.origin}): ` +
        `it takes only the origins its operator allowed. The page it serves itself, ${server.origin}/, ` +
        `can always connect. Trying again every ${REFUSED_RETRY_MS / 1000} s.`,
    );
    this.retryTimer = setTimeout(() => this.open(), REFUSED_RETRY_MS);
  }

  async greet() {
    const token = this.token;
    if (token) {
      try {
        return this.welcomed(await this.request({ type: "hello", version: PROTOCOL_VERSION, token }));
      } catch (error) {
        if (!(error instanceof Refused) || error.code !== "unknown_token") return this.failed(error);
        // The server forgot the account (it restarted without Redis): start a new one,
        // and let the page say so, or the player would find 1,000 chips and no word why.
        this.token = null;
        this.forgotten = true;
      }
    }
    const name = this.asked || this.name;
    if (name) return this.identify(name);
    this.setStatus("need-name");
  }

  /** Open a new account under `name` (the sign-in form calls this). @param {string} name */
  async identify(name) {
    this.asked = name;
    // The server closed the connection that waited for the name (see lost): a new
    // one says hello with it as soon as it opens.
    if (!this.ws) return this.open();
    try {
      this.welcomed(await this.request({ type: "hello", version: PROTOCOL_VERSION, name }));
    } catch (error) {
      // Lost with the connection, the name is said again on the next (see lost).
      if (!(error instanceof Refused)) return;
      // Refused, it opened no account: the card asks for a name again, saying what to do.
      // The connection stays open for it, until the server's wait for a hello is up.
      this.asked = "";
      this.setStatus("need-name", NAME_REFUSALS.get(error.code) ?? error.message);
    }
  }

  /** @param {any} welcome */
  welcomed(welcome) {
    this.asked = "";
    if (welcome.token) this.token = welcome.token;
    this.storage.setItem("qiuqiu.name", welcome.name);
    this.sessions += 1;
    this.info.attempt = 0;
    this.setStatus("online");
    this.onWelcome(welcome);
  }

  /** A `hello` with the token refused, but for an unknown token (see greet). @param {unknown} error */
  failed(error) {
    // A dropped connection is handled by its close event.
    if (!(error instanceof Refused)) return;
    // The server keeps the connection open for another hello: the next goes on a new
    // one, by itself when the refusal passes, else when the player asks (retryNow).
    const ws = this.ws;
    this.ws = null;
    ws?.close();
    if (PASSING_REFUSALS.has(error.code)) this.lost(1000, error.message);
    else this.setStatus("stopped", error.message);
  }

  /** @param {string} data */
  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    // Table events caused by a request carry its ref too; only the reply settles it.
    const isEvent = "seq" in message && "table_id" in message;
    const waiting = isEvent ? undefined : this.pending.get(message.ref);
    if (waiting) {
      this.pending.delete(message.ref);
      if (message.type === "error") waiting.reject(new Refused(message.code, message.message));
      else waiting.resolve(message);
      if (message.type === "error" || message.type === "welcome") return;
    }
    if (message.type === "table_left") this.leftAlready(message);
    this.onMessage(message);
  }

  /**
   * Settle every `leave_table` still waiting at the table `left` says the seat has
   * left: one that hurried an earlier (sent with `after_hand`) took its place, and
   * the earlier gets no answer of its own (PROTOCOL.md, `leave_table`).
   * @param {any} left
   */
  leftAlready(left) {
    for (const [id, { resolve, message }] of this.pending) {
      if (message.type === "leave_table" && message.table_id === left.table_id) {
        this.pending.delete(id);
        resolve(left);
      }
    }
  }

  /**
   * Send a message with a fresh id and wait for the reply that names it.
   * @param {Record<string, unknown>} message
   * @returns {Promise<any>}
   */
  request(message) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new NotConnected("not connected"));
        return;
      }
      this.pending.set(id, { resolve, reject, message });
      this.ws.send(JSON.stringify({ ...message, id }));
    });
  }

  /** Send without waiting for a reply (an action: its events are the answer). @param {Record<string, unknown>} message */
  send(message) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify({ ...message, id: this.nextId++ }));
    return true;
  }

  /** @param {number} code @param {string} reason */
  lost(code, reason) {
    this.ws = null;
    this.refusals = 0;
    // Ids are remembered per connection: a new one may start again from 1.
    this.nextId = 1;
    for (const { reject } of this.pending.values()) reject(new Error("connection lost"));
    this.pending.clear();
    this.info.code = code;
    // The server closes a connection that has not said hello for a while (1008): one
    // waiting for the player to type a name is let go, and identify opens another. One
    // lost with a name on its way opens again, and says it (see greet), also when the
    // server's wait ran out as the name went out (no refusal of this page's).
    if (this.info.status === "need-name" && !this.asked) return;
    if (this.info.status === "need-name" && code === 1008 && reason.startsWith(NO_HELLO)) {
      this.open();
      return;
    }
    const final = FINAL_CLOSES.get(code);
    if (final) {
      // 1008 closes for more than one reason (a flood, too many connections): the server's says which.
      this.setStatus("stopped", code === 1008 && reason ? `The server closed the connection: ${reason}.` : final);
      return;
    }
    const delay = BACKOFF_MS[Math.min(this.info.attempt, BACKOFF_MS.length - 1)];
    // Jitter keeps many pages from knocking at once after a server restart.
    const wait = Math.round(delay * (0.8 + Math.random() * 0.4));
    this.info.attempt += 1;
    this.info.retryAt = Date.now() + wait;
    this.setStatus("reconnecting", reason || (code === 1001 ? "The server is restarting." : "Connection lost."));
    this.retryTimer = setTimeout(() => this.open(), wait);
  }

  /**
   * Skip the rest of the wait (the network came back, or the player asked). A
   * stopped session comes back only when the player asks (`force`): taking the
   * account back from another tab by itself would make two tabs fight over it.
   * @param {boolean} [force]
   */
  retryNow(force = false) {
    const { status } = this.info;
    if (this.ws || !(status === "reconnecting" || (force && (status === "stopped" || status === "refused")))) return;
    this.open();
  }
}
