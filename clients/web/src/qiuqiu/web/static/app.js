// The page: one connection, the tables it sits or watches at, and which view
// shows. Messages come in, fold into state, and the current view is redrawn.

import { Connection, NotConnected, Refused, TAKEN_OVER } from "./connection.js";
import { TableState } from "./state.js";
import { TableView } from "./table.js";
import { LobbyView } from "./lobby.js";
import { Tally } from "./tally.js";
import { DealLedger } from "./deals.js";
import { SeedBook, newClientSeed } from "./seeds.js";
import { LeaveBook, sameLeaving } from "./leaving.js";
import { actedAway, cameBack, tellAway } from "./away.js";
import { askSeed, audited, awaitSeed, rebuild, revealedAfterLeaving } from "./shuffles.js";
import { h, chips, counted } from "./dom.js";
import { accountBar, signinCard } from "./account.js";

/** The server to talk to: `?server=ws://...`, or the one that served this page. */
function serverUrl() {
  const asked = new URLSearchParams(location.search).get("server");
  if (asked) return asked;
  if (!location.host) return "ws://127.0.0.1:8765/";
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
}

const LOBBY_REFRESH_MS = 4000;
/** How long a snapshot asked for after a gap may take before the next gap asks again. */
const SNAPSHOT_PATIENCE_MS = 2000;

/** What a seat stood up with went back: @param {number} chips */
const wentBack = (chips) => `your ${counted(chips, "chip")} went back to your balance.`;

class App {
  constructor() {
    /** @type {Map<string, TableState>} */
    this.tables = new Map();
    /** Tables this page watches, so they are watched again after a reconnect. */
    this.watching = new Set();
    /** Tables whose seat asked to stand up, until `table_left`: this tab's and the account's other tabs'. */
    this.leaving = new LeaveBook(localStorage);
    /** @type {Map<string, number>} Tables with a snapshot asked for (after a gap in `seq`), and when. */
    this.awaiting = new Map();
    /** @type {Map<string, number>} Seated tables a resumed session found again, and the first hand whose end it may have missed (away.js). */
    this.away = new Map();
    /** Set while another tab played this account's seats: their hands are that tab's, not played for this one. */
    this.playedElsewhere = false;
    /** @type {import("./away.js").Acted | null} The last action sent, until an event answers it. */
    this.acted = null;
    /** @type {string | null} A table this page asked to sit at, until the answer comes. */
    this.joining = null;
    /** @type {string | null} */
    this.active = null;
    /** @type {"signin" | "lobby" | "table"} */
    this.view = "signin";
    this.balance = 0;
    this.name = "";
    this.accountId = "";
    /** @type {any[]} */
    this.lobbyTables = [];
    this.online = false;
    /** Set while the account plays in another tab or window, which took the session over. */
    this.elsewhere = false;
    /** This browser tab's evening: every hand it saw you play, at any table. */
    this.session = Tally.load(sessionStorage, "qiuqiu.session");
    /** @type {Map<string, Tally>} the same, table by table, for the summary on leaving (see tableTally) */
    this.tallies = new Map();
    /** @type {{tableId: string, tally: Tally, balance: number, why: string} | null} */
    this.farewell = null;
    /** This page's client seed at each table it sits at. */
    this.seeds = new SeedBook();
    /** @type {Map<string, DealLedger>} what this page saw of each table's hands, kept until its seed is out */
    this.ledgers = new Map();
    /** @type {Map<string, DealLedger>} tables left or closed, whose full rebuild the lobby shows */
    this.audits = new Map();

    this.main = /** @type {HTMLElement} */ (document.getElementById("main"));
    this.statusEl = /** @type {HTMLElement} */ (document.getElementById("status"));
    this.accountEl = /** @type {HTMLElement} */ (document.getElementById("account"));
    this.toastEl = /** @type {HTMLElement} */ (document.getElementById("toast"));

    this.conn = new Connection(serverUrl(), {
      onMessage: (m) => this.receive(m),
      onWelcome: (w) => this.welcome(w),
      onStatus: (info) => this.status(info),
    });
    this.tableView = new TableView({
      act: (state, action) => this.act(state, action),
      leave: (state) => this.leave(state),
      lobby: () => this.show("lobby"),
      rebuy: (state, buyIn) => this.rebuy(state, buyIn),
      history: (state) => this.history(state),
      takeBack: () => this.conn.retryNow(true),
      setSeed: (state, seed) => this.setSeed(state.tableId, seed),
      seed: (state) => this.seeds.get(state.tableId),
    });
    this.lobbyView = new LobbyView({
      create: (options, buyIn) => this.create(options, buyIn),
      join: (id, buyIn) => this.join(id, buyIn),
      watch: (id) => this.watch(id),
      open: (id) => this.open(id),
      refresh: () => this.refreshLobby(),
      dismiss: () => {
        this.farewell = null;
        for (const [id, ledger] of this.audits) if (ledger.audit || ledger.forgotten) this.audits.delete(id);
        this.drawLobby();
      },
    });
    this.connectionNote = h("p", { class: "connection-note", role: "alert" });
    this.signin = signinCard(this.conn.name, this.connectionNote, (name) => this.conn.identify(name));

    setInterval(() => this.tableView.tick(), 200);
    setInterval(() => {
      if (this.view === "lobby" && this.online && document.visibilityState === "visible") this.refreshLobby();
    }, LOBBY_REFRESH_MS);
    addEventListener("hashchange", () => this.route());
    this.conn.open();
  }

  // -- the session -----------------------------------------------------------------

  /** @param {import("./connection.js").StatusInfo} info */
  status(info) {
    const was = this.statusEl.dataset.status;
    this.online = info.status === "online";
    this.elsewhere = info.status === "stopped" && info.code === TAKEN_OVER;
    // The tab that took the game sends seeds of its own, which this page never learns:
    // the ones it sent no longer say what the next hands are dealt with. Taking the
    // game back, it sends a new one (see snapshot).
    if (this.elsewhere) this.seeds = new SeedBook();
    if (this.elsewhere) this.playedElsewhere = true;
    const labels = {
      connecting: "Connecting…",
      "need-name": "Not signed in",
      online: "Online",
      reconnecting: "Reconnecting…",
      refused: "Not allowed",
      stopped: this.elsewhere ? "Playing in another tab" : "Disconnected",
    };
    this.statusEl.dataset.status = info.status;
    this.statusEl.dataset.sessions = String(this.conn.sessions);
    // Named as the table's bar names it, which leaves this one out where it shows (style.css).
    const retry = this.elsewhere ? "Play here instead" : "Reconnect";
    this.statusEl.replaceChildren(
      h("span", { class: "dot" }),
      h("span", { text: labels[info.status] }),
      ...(info.status === "stopped" || info.status === "refused" ? [h("button", { type: "button", class: "ghost small", onclick: () => this.conn.retryNow(true), text: retry })] : []),
    );
    this.statusEl.title = info.detail;
    // Before any session the page is blank but for this: the sign-in card says why.
    if (info.status === "need-name" || (info.status === "refused" && this.conn.sessions === 0)) this.show("signin");
    // At a table the bar under it says so in place, with its button: a note would only
    // cover that, or the header's Reconnect.
    const saidAtTable = this.view === "table" && !this.tables.get(this.active ?? "")?.busted;
    if ((info.status === "stopped" || (info.status === "refused" && was !== "refused")) && info.detail && !saidAtTable) this.toast(info.detail, "bad");
    // Said where the player looks, for as long as it lasts: a toast goes in seconds.
    this.connectionNote.textContent = ["refused", "stopped", "need-name"].includes(info.status) ? info.detail : "";
    if (info.status === "reconnecting" && info.code === 1001 && info.attempt === 1) {
      // Said to watchers too: the chips a seat had are said where it stood up (the farewell).
      this.toast("The server stopped. Every hand in play was called off and every seat's chips went back to its player's balance; this page reconnects when the server is back.", "bad");
    }
    if (this.view === "lobby") this.drawLobby();
    if (info.status === "reconnecting") {
      for (const state of this.tables.values()) if (state.log.at(-1)?.text !== "Connection lost: reconnecting…") state.note("Connection lost: reconnecting…", "warn");
    }
    this.redraw();
  }

  /** @param {any} welcome */
  welcome(welcome) {
    if (this.conn.forgotten) {
      this.conn.forgotten = false;
      this.toast(`The server no longer knows your account: it restarted without keeping accounts. You start again as a new player with ${chips(welcome.balance)} chips.`, "bad");
      this.session = new Tally();
      for (const key of Object.keys(sessionStorage)) if (key.startsWith("qiuqiu.table.")) sessionStorage.removeItem(key);
      this.tallies.clear();
      this.farewell = null;
      this.session.save(sessionStorage, "qiuqiu.session");
    }
    this.name = welcome.name;
    this.accountId = welcome.account_id;
    this.balance = welcome.balance;
    this.drawAccount();
    // The seeds still awaited are asked for at once: the poll's next turn may be a while
    // off after the server was away (its pauses grow, SEED_POLL_MS in shuffles.js).
    for (const [id, ledger] of this.audits) if (!ledger.audit && !ledger.forgotten) askSeed(this, id, ledger);
    const seated = new Set(/** @type {string[]} */ (welcome.tables));
    const gone = welcome.resumed && !this.playedElsewhere ? cameBack(this, welcome) : new Set();
    this.playedElsewhere = false;
    // The ends replayed before each seated table's snapshot come after gaps in seq: the
    // snapshot that follows them, unasked, covers those (PROTOCOL.md, "The session").
    this.awaiting = new Map(welcome.tables.map((/** @type {string} */ id) => [id, Date.now()]));
    // A seat still held is asked to stand up again with its snapshot (see snapshot).
    for (const id of this.leaving.keys()) if (!seated.has(id)) this.leaving.delete(id);
    // A snapshot of every seated table follows; watched ones must be asked for again.
    for (const id of [...this.tables.keys()]) {
      if (seated.has(id) || this.watching.has(id)) continue;
      this.tables.delete(id);
      // Its hands are checked once its seed is out, or said never to be (a server that
      // forgot the table): a seat lost with a forgotten account went without a word.
      if (!gone.has(id)) awaitSeed(this, id);
    }
    const wanted = gone.has(this.hashTable() ?? "") ? null : this.hashTable();
    if (wanted && !seated.has(wanted)) this.watching.add(wanted);
    // Watched again out of sight: the page stays where its player was (in the lobby, at
    // a table); only a page just loaded goes to a seat of its own.
    for (const id of this.watching) if (!seated.has(id)) this.watch(id, false);
    const joined = this.joining;
    this.joining = null;
    if (joined && !seated.has(joined)) this.toast(`The connection dropped before the server answered: you did not sit down at table ${joined}.`, "bad");
    const next = wanted ?? (joined && seated.has(joined) ? joined : this.active) ?? (this.view === "lobby" ? null : welcome.tables[0]) ?? null;
    if (next && (seated.has(next) || this.watching.has(next))) {
      this.active = next;
      // Shown when its snapshot arrives.
      if (!this.tables.has(next)) return;
      this.show("table");
    } else {
      this.show("lobby");
    }
  }

  /** @param {any} m */
  receive(m) {
    if (m.type === "table_snapshot") return this.snapshot(m);
    if ("seq" in m && "table_id" in m) return this.event(m);
    switch (m.type) {
      case "table_list":
        this.lobbyTables = m.tables;
        // A table's close comes right after the stand-up it causes, before any listing:
        // one heard later (its last player gone, say) did not stand this seat up.
        if (this.farewell) this.farewell.stoodUpWith = null;
        this.drawLobby();
        break;
      case "table_joined":
        this.balance = m.balance;
        this.drawAccount();
        this.watching.delete(m.table_id);
        this.active = m.table_id;
        break;
      case "table_watched":
        // Not shown for that: this page's own watch() shows the table it asked for, and
        // one watched again unasked (its server took it over) stays where it was.
        this.watching.add(m.table_id);
        break;
      case "table_left":
        this.tableLeft(m);
        break;
      case "seed_set":
        this.seeds.confirmed(m.table_id, m.client_seed);
        this.tables.get(m.table_id)?.note("Your new client seed applies from the next hand.", "ok");
        this.redraw();
        break;
      case "error":
        this.acted = null;
        this.tableView.refused();
        this.toast(m.message, "bad");
        break;
    }
  }

  /** @param {any} m */
  snapshot(m) {
    const id = m.table.table_id;
    const before = this.tables.get(id);
    const ledger = this.ledgers.get(id) ?? this.openLedger(id, m.table.seed_commitment);
    const broke = ledger.committed(m.table.seed_commitment);
    const state = new TableState(m, () => this.redraw(), ledger);
    if (broke) state.note(`DEAL CHECK FAILED: ${ledger.broken} Do not trust this server.`, "bad");
    if (before) {
      // The log and the last result outlive a reconnect or a rebuy: they are this page's own.
      state.log = before.log;
      state.result = before.result;
      state.skewMs = before.skewMs;
      // Whatever was said since the connection dropped (a hand called off may come first).
      const said = before.log.findLast((line) => line.text === "Back online." || line.text.startsWith("Connection lost"));
      const back = said?.text.startsWith("Connection lost");
      if (back) state.note("Back online.", "ok");
      if (back && this.acted?.tableId === id) {
        const acted = actedAway(this.acted, m, state);
        if (acted) state.note(acted, "warn");
        this.acted = null;
      }
      const hand = state.hand;
      // Its start went by unseen: headed as any hand, after the hands played out before it.
      if (back && hand && hand.phase !== "ended" && hand.handId !== before.hand?.handId) {
        state.note(`Hand #${hand.handId} (begun while you were away)`, "head");
        if (state.me?.tiles.length) state.note(`You were dealt ${state.me.tiles.join("  ")}.`);
      }
    }
    if (state.you !== null) ledger.hadSeat = true;
    this.tables.set(id, state);
    this.awaiting.delete(id);
    tellAway(this, state);
    // Seated without having sent a seed from this page (a resumed session), or with one
    // never confirmed (its server may have stopped before writing it): send it now.
    const { current, pending } = this.seeds.get(id);
    if (state.you !== null && (!current || pending)) this.setSeed(id, pending ?? newClientSeed());
    // A request to stand up may have gone with a server that died (this snapshot is
    // then its new host's): ask again. Where it was heard, `already_leaving` says so.
    const leaving = this.leaving.get(id);
    if (leaving && state.you === null) this.leaving.delete(id);
    else if (leaving) this.askToLeave(state, leaving.afterHand && stillPlaying(state));
    this.drawAccount();
    if (this.active === id) this.show("table");
  }

  /** @param {any} m */
  event(m) {
    const state = this.tables.get(m.table_id);
    if (!state && m.type === "table_closed") this.closedAfterLeaving(m);
    if (!state) return;
    const applied = state.apply(m);
    // Asked again if it takes long: the request can be refused (its table's server not
    // sure of the table for a moment) or lost between server processes.
    const asked = this.awaiting.get(m.table_id);
    if (applied === "gap" && (asked === undefined || Date.now() - asked > SNAPSHOT_PATIENCE_MS)) {
      this.awaiting.set(m.table_id, Date.now());
      this.conn.send({ type: "request_snapshot", table_id: m.table_id });
    }
    if (applied !== "applied") return;
    // The page's own action comes back with its ref; a time-out takes its place.
    if (m.ref !== undefined || (m.type === "turn_timed_out" && m.seat === state.you)) this.acted = null;
    // The header's chips at the table are the seat's stack as it is now, as its box says.
    if (state.you !== null) this.drawAccount();
    if (m.type === "hand_ended") this.record(state);
    const leaving = this.leaving.get(m.table_id);
    if (m.type === "hand_started" && leaving && m.hand_id > leaving.handId && state.me?.inHand) {
      // A seat that asked to stand up is never dealt in: the request was lost.
      if (leaving.afterHand) state.note("You were dealt into this hand all the same: you will leave after it.", "warn");
      this.askToLeave(state, leaving.afterHand);
    }
    if (m.type === "table_closed") audited(this, m.table_id);
    // Where this page sat, the hands it forgot in a reload are in the table's history.
    if (m.type === "table_closed" && m.table_seed && state.deals.hadSeat) {
      this.audits.set(m.table_id, state.deals);
      rebuild(this, m.table_id, state.deals, m.table_seed);
    }
    if (m.type === "table_closed" && state.busted) {
      // The showdown that broke this seat stays on screen; a rebuy opens a new table.
      this.tables.set(m.table_id, state);
    } else if (m.type === "table_closed" && state.moving) {
      // A seat's connection is closed (1012) to find it there, and the welcome that
      // follows lists the table; a spectator's is not, so the page watches it there.
      if (state.you === null) this.watch(m.table_id, this.active === m.table_id);
    } else if (m.type === "table_closed") {
      this.tables.delete(m.table_id);
      this.watching.delete(m.table_id);
      if (this.active === m.table_id) {
        this.toast(`The table closed: ${m.reason}.`);
        this.show("lobby");
        return;
      }
    }
    if (this.active === m.table_id && this.view === "table") this.redraw();
  }

  /** A hand ended at a table where this page sits: into the evening's tally. @param {TableState} state */
  record(state) {
    const result = state.result;
    // A hand called off moved no chip: it is not one played.
    if (state.you === null || !result || result.voided) return;
    const net = result.nets.get(state.you);
    if (net === undefined) return;
    // The pots this seat had a share of, not the side pots others took (as the terminal client counts).
    const pot = result.awards.filter((a) => a.shares.some((x) => x.seat === state.you)).reduce((sum, a) => sum + a.amount, 0);
    this.session.add(`${state.tableId}:${result.handId}`, net, pot);
    const atTable = this.tableTally(state.tableId);
    atTable.add(`${state.tableId}:${result.handId}`, net, pot);
    atTable.save(sessionStorage, `qiuqiu.table.${state.tableId}`);
    this.session.save(sessionStorage, "qiuqiu.session");
    this.drawAccount();
  }

  /** This tab's figure at one table, kept in sessionStorage as the evening's is, so a
   * reload does not start it again. @param {string} tableId */
  tableTally(tableId) {
    let tally = this.tallies.get(tableId);
    if (!tally) {
      tally = Tally.load(sessionStorage, `qiuqiu.table.${tableId}`);
      this.tallies.set(tableId, tally);
    }
    return tally;
  }

  /** @param {string} tableId */
  forgetTally(tableId) {
    this.tallies.delete(tableId);
    sessionStorage.removeItem(`qiuqiu.table.${tableId}`);
  }

  /** @param {any} m */
  tableLeft(m) {
    if (m.balance !== undefined) this.balance = m.balance;
    this.drawAccount();
    const state = this.tables.get(m.table_id);
    const stoodUp = m.ref === undefined && m.seat !== undefined && m.seat !== null;
    if (stoodUp && m.cashed_out === 0 && state) {
      // Busted: the showdown stays on screen with the offer to buy in again.
      state.busted = true;
      state.bustedSeat = m.seat;
      state.you = null;
      state.legal = null;
      this.leaving.delete(m.table_id);
      this.redraw();
      return;
    }
    if (m.seat !== undefined && m.seat !== null) {
      awaitSeed(this, m.table_id);
      const tally = this.tableTally(m.table_id);
      const asked = m.ref !== undefined || this.leaving.has(m.table_id);
      const why = !asked ? `You were stood up (the server is stopping, or you were away past the grace period): ${wentBack(m.cashed_out)}` : `You left with ${counted(m.cashed_out, "chip")}.`;
      this.farewell = { tableId: m.table_id, tally, balance: m.balance, why, stoodUpWith: asked ? null : m.cashed_out };
      this.forgetTally(m.table_id);
    }
    this.tables.delete(m.table_id);
    this.watching.delete(m.table_id);
    this.leaving.delete(m.table_id);
    this.drawAccount();
    if (this.active === m.table_id) {
      this.active = null;
      this.show("lobby");
    }
  }

  /** A table this page no longer follows closed: its seed, and why its seat stood up. @param {any} m */
  closedAfterLeaving(m) {
    if (m.table_seed) revealedAfterLeaving(this, m.table_id, m.table_seed);
    const farewell = this.farewell;
    // The stand-up came with the close (the server stopping, say): its reason replaces
    // the guess between two causes.
    if (farewell?.tableId !== m.table_id || typeof farewell.stoodUpWith !== "number") return;
    farewell.why = `You were stood up as the table closed (${m.reason}): ${wentBack(farewell.stoodUpWith)}`;
    if (this.view === "lobby") this.drawLobby();
  }

  // -- what the player does --------------------------------------------------------

  /** @param {TableState} state @param {Record<string, unknown>} action */
  act(state, action) {
    if (!state.hand) return false;
    const sent = this.conn.send({ ...action, table_id: state.tableId, hand_id: state.hand.handId });
    if (sent) this.acted = { tableId: state.tableId, handId: state.hand.handId, type: String(action.type), seq: state.seq };
    return sent;
  }

  /**
   * Open a table, then sit down at it with a seed of this page's own: `create_table`
   * takes none (a server that saw it first could pick its table seed against it).
   * @param {Record<string, unknown>} options @param {number} buyIn
   */
  async create(options, buyIn) {
    // Checked here first: the table is made before the seat is asked for, so a buy-in
    // the server refuses would leave an empty table in everyone's lobby for a minute.
    if (!this.buyInFits(options, buyIn)) return;
    try {
      const created = await this.conn.request({ type: "create_table", options });
      this.openLedger(created.table.table_id, created.table.seed_commitment);
      await this.sit(created.table.table_id, buyIn);
    } catch (error) {
      this.refusal(error);
    }
  }

  /** @param {string} tableId @param {number} buyIn */
  async join(tableId, buyIn) {
    const listed = this.lobbyTables.find((x) => x.table_id === tableId);
    if (listed && !this.buyInFits(listed.options, buyIn)) return;
    try {
      await this.sit(tableId, buyIn);
    } catch (error) {
      this.refusal(error);
    }
  }

  /**
   * Whether `buyIn` is one a table of `options` takes from this balance; if not, says
   * why in the page's words (the server's name its fields: "buy_in: Input should be...").
   * @param {Record<string, unknown>} options @param {number} buyIn
   */
  buyInFits(options, buyIn) {
    const low = Number(options.min_buy_in), high = Number(options.max_buy_in);
    // What this balance can buy in with, as the rebuy panel says: told the table's range, a player tried an amount the balance then refused.
    const most = this.balance >= low ? Math.min(high, this.balance) : high, upTo = most < high ? " (your balance)" : "";
    let fault = "";
    if (!Number.isInteger(buyIn) || buyIn <= 0) fault = `Buy in with a whole number of chips, ${chips(low)} to ${chips(most)}${upTo}.`;
    else if (buyIn < low || buyIn > high) fault = `Buy in with ${chips(low)} to ${chips(most)} chips${upTo}, not ${chips(buyIn)}.`;
    else if (buyIn > this.balance) fault = `Your balance is ${counted(this.balance, "chip")}, not enough for ${chips(buyIn)}.`;
    if (fault) this.toast(fault, "bad");
    return !fault;
  }

  /**
   * The ledger of a table's deals, held to `seedCommitment`.
   * @param {string} tableId @param {string | null | undefined} seedCommitment
   */
  openLedger(tableId, seedCommitment) {
    const ledger = new DealLedger(
      tableId,
      seedCommitment ?? "",
      () => this.seeds.allowed(tableId),
      (listed) => this.seeds.dealt(tableId, listed),
    );
    this.ledgers.set(tableId, ledger);
    return ledger;
  }

  /**
   * `join_table` with a fresh client seed, once the table's seed commitment is pinned:
   * the one seen before the server had this seed (the lobby's, asked for if this page
   * has not seen the table), never the one the snapshot after it shows.
   * @param {string} tableId @param {number} buyIn
   */
  async sit(tableId, buyIn) {
    if (!this.ledgers.has(tableId)) {
      let listed = this.lobbyTables.find((x) => x.table_id === tableId);
      if (!listed) {
        this.lobbyTables = (await this.conn.request({ type: "list_tables" })).tables;
        listed = this.lobbyTables.find((x) => x.table_id === tableId);
      }
      this.openLedger(tableId, listed?.seed_commitment);
    }
    const seed = this.seeds.joining(tableId);
    this.joining = tableId;
    try {
      await this.conn.request({ type: "join_table", table_id: tableId, buy_in: buyIn, client_seed: seed });
      this.joining = null;
    } catch (error) {
      // Unanswered as the connection dropped, it may have been heard: the welcome says.
      if (error instanceof Refused) this.joining = null;
      if (refusedForSure(error) && this.seeds.get(tableId).current === seed) this.seeds.forget(tableId);
      throw error;
    }
  }

  /** Put `seed` into this seat's shuffles from the next hand. @param {string} tableId @param {string} seed */
  async setSeed(tableId, seed) {
    this.seeds.sending(tableId, seed);
    this.redraw();
    try {
      await this.conn.request({ type: "set_seed", table_id: tableId, client_seed: seed });
    } catch (error) {
      // A seed lost with the connection, or whose outcome is unknown, may have been
      // taken: it stays one the next hands may be dealt with.
      if (refusedForSure(error)) this.seeds.dropped(tableId);
      this.seeds.unanswered(tableId);
      this.refusal(error);
      this.redraw();
    }
  }

  /**
   * Watch a table; refused one of WAITED_OUT (nothing changed), ask again a while later.
   * @param {string} tableId @param {boolean} open whether to show it once its snapshot comes
   */
  async watch(tableId, open = true) {
    this.watching.add(tableId);
    if (open) this.active = tableId;
    try {
      for (const wait of [...WAITED_OUT_RETRIES_MS, null]) {
        try {
          await this.conn.request({ type: "watch_table", table_id: tableId });
          return;
        } catch (error) {
          if (wait === null || !(error instanceof Refused && WAITED_OUT.has(error.code))) throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
        if (!this.watching.has(tableId)) return;
      }
    } catch (error) {
      this.watching.delete(tableId);
      // What was kept of it (a seat, when the server forgot everything) is no more.
      this.tables.delete(tableId);
      this.drawAccount();
      if (this.active === tableId) this.active = null;
      // Asked for by the page's address, as after a reload: the server's own words name no cause.
      if (error instanceof Refused && error.code === "unknown_table") this.toast(`Table ${tableId} is no longer open: it closed, or the server restarted without keeping it.`, "bad");
      else this.refusal(error);
      if (this.view !== "lobby") this.show("lobby");
    }
  }

  /** @param {string} tableId */
  open(tableId) {
    if (!this.tables.has(tableId)) return;
    this.active = tableId;
    this.show("table");
  }

  /** Buy in again at the table that broke this seat. @param {TableState} state @param {number} buyIn */
  async rebuy(state, buyIn) {
    if (!this.buyInFits(state.options, buyIn)) return;
    try {
      await this.sit(state.tableId, buyIn);
    } catch (error) {
      if (error instanceof Refused && (error.code === "unknown_table" || error.code === "table_closed")) {
        // The table is gone: open one like it instead, as the offer said (not an error).
        this.toast(`Table ${state.tableId} has closed: you sit down at a new one like it.`);
        const { seats, dealer_bot, min_players, ante, min_bet, max_bet, max_raises, betting_rounds, tie_rule, manual_split, turn_seconds, min_buy_in, max_buy_in } = state.options;
        this.tables.delete(state.tableId);
        await this.create({ seats, dealer_bot, min_players, ante, min_bet, max_bet, max_raises, betting_rounds, tie_rule, manual_split, turn_seconds, min_buy_in, max_buy_in }, buyIn);
      } else {
        this.refusal(error);
      }
    }
  }

  /** Ask for the table's past hands, for the history and the replayer. @param {TableState} state */
  async history(state) {
    try {
      const reply = await this.conn.request({ type: "list_hands", table_id: state.tableId });
      this.tableView.history.show(reply.hands, this.accountId);
    } catch (error) {
      this.refusal(error);
    }
  }

  /** @param {TableState} state */
  async leave(state) {
    if (state.busted) {
      this.tables.delete(state.tableId);
      awaitSeed(this, state.tableId);
      this.farewell = { tableId: state.tableId, tally: this.tableTally(state.tableId), balance: this.balance, why: "You ran out of chips at this table." };
      this.forgetTally(state.tableId);
      this.active = null;
      this.show("lobby");
      return;
    }
    if (state.you === null) {
      try {
        await this.conn.request({ type: "leave_table", table_id: state.tableId });
      } catch (error) {
        this.refusal(error);
      }
      return;
    }
    // The first click in a hand still to play out waits for its end; another leaves at once.
    const afterHand = stillPlaying(state) && !this.leaving.has(state.tableId);
    if (afterHand) state.note("You will leave after this hand: play it out. “Leave now” leaves at once, the rest of the hand checked or folded for you.", "warn");
    else if (stillPlaying(state)) state.note("Leaving now: the rest of this hand is checked or folded for you.", "warn");
    await this.askToLeave(state, afterHand);
  }

  /**
   * Ask the server to stand this seat up: as the hand ends, played out by the player
   * (`afterHand`), or at once, any turn left in the hand checked or folded.
   * @param {TableState} state @param {boolean} afterHand @param {number} waits how
   * many times it was refused one of WAITED_OUT, and asked again a moment later
   */
  async askToLeave(state, afterHand, waits = 0) {
    const tableId = state.tableId;
    const asked = { afterHand, handId: state.hand?.handId ?? 0 };
    this.leaving.set(tableId, asked);
    this.redraw();
    try {
      await this.conn.request({ type: "leave_table", table_id: tableId, ...(afterHand ? { after_hand: true } : {}) });
    } catch (error) {
      // Dropped with the connection, or sent to a table on its way to another server:
      // asked again with the snapshot that follows. One asked already stands.
      if (!(error instanceof Refused) || ASKED_AGAIN.has(error.code)) return;
      const wait = WAITED_OUT.has(error.code) ? WAITED_OUT_RETRIES_MS[waits] : undefined;
      if (wait !== undefined && sameLeaving(this.leaving.get(tableId), asked)) {
        // Its table's host making sure of its lease: a page that gave up here would
        // leave the seat behind, playing on.
        state.note("Not left yet: the server could not take the request just now (nothing changed). Asking again in a moment…", "warn");
        this.redraw();
        await new Promise((resolve) => setTimeout(resolve, wait));
        const now = this.tables.get(tableId);
        // Not if the seat has left meanwhile, or the player asked again ("Leave now").
        if (now && sameLeaving(this.leaving.get(tableId), asked)) await this.askToLeave(now, afterHand && stillPlaying(now), waits + 1);
        return;
      }
      if (sameLeaving(this.leaving.get(tableId), asked)) this.leaving.delete(tableId);
      this.refusal(error);
      this.redraw();
    }
  }

  async refreshLobby() {
    try {
      await this.conn.request({ type: "list_tables" });
    } catch {
      // The next refresh, or the reconnect, tries again.
    }
  }

  /** @param {unknown} error */
  refusal(error) {
    if (error instanceof Refused) this.toast(error.message, "bad");
    // Else a click made offline did nothing, and said nothing.
    else if (error instanceof NotConnected) this.toast("Not connected to the server: nothing was sent. Try again once the page is back online.", "bad");
  }

  // -- views -----------------------------------------------------------------------

  /** @param {"signin" | "lobby" | "table"} view */
  show(view) {
    if (view === "table" && !(this.active && this.tables.has(this.active))) view = "lobby";
    // A new view starts at its top, as a new page would (the lobby's form may be far down).
    if (view !== this.view) scrollTo(0, 0);
    this.view = view;
    // A table's snapshot that comes while the lobby is shown (one watched out of sight,
    // or a seat's) leaves the lobby there.
    if (view !== "table") this.active = null;
    document.body.dataset.view = view;
    const hash = view === "table" && this.active ? `#/table/${this.active}` : view === "lobby" ? "#/" : "";
    if (hash && location.hash !== hash) history.replaceState(null, "", hash);
    // The server forgot the account, and with it (in memory) every table: the address
    // would name one to the next reload. A name not yet given keeps it, to go there after.
    if (view === "signin" && this.conn.forgotten && this.hashTable()) history.replaceState(null, "", "#/");
    // Signed out (a name refused where the server forgot the account): no balance is this page's.
    if (view === "signin") this.accountEl.replaceChildren();
    if (view === "signin") this.main.replaceChildren(this.signin);
    if (view === "lobby") {
      this.main.replaceChildren(this.lobbyView.root);
      this.drawLobby();
      this.refreshLobby();
    }
    if (view === "table") this.main.replaceChildren(this.tableView.root);
    this.redraw();
  }

  /** The table named in the address (`#/table/t123`), so a reload goes back to it. */
  hashTable() {
    const match = /^#\/table\/([\w-]{1,32})$/.exec(location.hash);
    return match ? match[1] : null;
  }

  route() {
    const wanted = this.hashTable();
    if (!this.online) return;
    // An address typed by hand that names no table id is said so: sent, the server's
    // refusal is in its schema's words, and most such ids went unanswered.
    if (!wanted && location.hash.startsWith("#/table/")) this.toast("The address names no table: after #/table/ comes a table's id, 1 to 32 letters, digits, _ or -, such as t3c41b5e0.", "bad");
    if (!wanted && this.view === "table") this.show("lobby");
    else if (wanted && wanted !== this.active) {
      if (this.tables.has(wanted)) this.open(wanted);
      else this.watch(wanted);
    }
  }

  redraw() {
    if (this.view === "table" && this.active) {
      const state = this.tables.get(this.active);
      if (state) this.tableView.render(state, { online: this.online, offline: this.connectionNote.textContent || "Reconnecting… your seat is kept meanwhile.", elsewhere: this.elsewhere, leaving: this.leaving.get(this.active) ?? null, balance: this.balance });
    }
  }

  drawLobby() {
    const seatedAt = new Set([...this.tables.values()].filter((s) => s.you !== null).map((s) => s.tableId));
    const watchingAt = new Set([...this.watching].filter((id) => this.tables.has(id)));
    // Offline, the last list read would stand for the server's tables for as long as it
    // lasts: tables it has closed, stacks long gone.
    this.lobbyView.render(this.online ? this.lobbyTables : null, { elsewhere: this.elsewhere, balance: this.balance, seatedAt, watchingAt, farewell: this.farewell, session: this.session, audits: [...this.audits.values()] });
  }

  drawAccount() {
    const stacks = [...this.tables.values()].flatMap((t) => (t.me ? [t.me.stack ?? 0] : []));
    this.accountEl.replaceChildren(...accountBar(this.name, this.balance, stacks, this.session));
  }

  /** @param {string} text @param {string} [kind] */
  toast(text, kind = "") {
    const item = h("div", { class: `toast-item ${kind}`, role: "status", text });
    this.toastEl.append(item);
    setTimeout(() => item.remove(), 5000);
  }
}

/** Refusals of `watch_table` or `leave_table` that say nothing changed and that a moment mends: the table's
 * server stopped and another has not adopted it yet, or its new host is making sure of its lease. */
const WAITED_OUT = new Set(["table_moving", "store_unavailable"]);
/** Waits before asking again to watch a table, or to leave it, refused one of WAITED_OUT: some 15 s in all. */
const WAITED_OUT_RETRIES_MS = [500, 1000, 2000, 4000, 8000];

/** Refusals of `leave_table` that are no answer: it is asked again, or was already. */
const ASKED_AGAIN = new Set(["already_leaving", "table_moving", "outcome_unknown"]);

/** Whether this seat is still playing the hand in progress: dealt in, not folded. @param {TableState} state */
const stillPlaying = (state) => state.you !== null && !!state.hand && state.hand.phase !== "ended" && !!state.me?.inHand && !state.me.folded;

/** Whether `error` says the server did not apply the message (not `outcome_unknown`), or that it was never sent. @param {unknown} error */
const refusedForSure = (error) => (error instanceof Refused && error.code !== "outcome_unknown") || error instanceof NotConnected;

// One app per page; exposed for debugging from the console.
/** @type {any} */ (window).qiuqiu = new App();
