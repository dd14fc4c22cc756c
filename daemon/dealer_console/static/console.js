// shoe2mqtt dealer console: lays out what the console process sends (Server-Sent Events) and
// posts what the dealer taps. Every word of the table is made by the server
// (daemon/dealer_console/view.py); this builds the page with textContent throughout and shows
// only what the daemon published: never a face-down card. No library, no build step.
"use strict";

(() => {
  const HEARTBEAT_MS = 5000;
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
  const DECISIONS = { hit: "Hit", stand: "Stand", double: "Double", split: "Split", surrender: "Surrender" };
  const main = document.getElementById("main");
  const link = document.getElementById("link");
  const who = document.getElementById("who");
  const title = document.getElementById("title");

  const ui = {
    setup: null, now: null, connected: false, lastHeard: 0,
    chip: 0, message: null, busy: false,
    entry: { open: false, rank: null, suit: null },
    resume: { discard: 0, burned: 0 }, voidArmed: false,
  };
  let source = null;
  let frame = 0;

  // ------------------------------------------------------------------ the stream
  function connect() {
    source = new EventSource("events");
    source.addEventListener("full", (event) => {
      const data = JSON.parse(event.data);
      ui.setup = data.setup;
      ui.now = data;
      heard();
      draw();
    });
    source.addEventListener("update", (event) => {
      ui.now = Object.assign(ui.now || {}, JSON.parse(event.data));
      heard();
      if (!frame) frame = requestAnimationFrame(() => { frame = 0; draw(); });
    });
    source.addEventListener("beat", () => heard());
    source.addEventListener("logout", () => { window.location.href = "login"; });
    source.addEventListener("error", () => {
      ui.connected = false;
      showLink();
      if (source.readyState === EventSource.CLOSED) setTimeout(() => { window.location.href = "./"; }, 2000);
    });
  }

  function heard() {
    ui.connected = true;
    ui.lastHeard = Date.now();
    showLink();
  }

  setInterval(() => {
    if (ui.connected && Date.now() - ui.lastHeard > 3 * HEARTBEAT_MS) {
      source.close();
      ui.connected = false;
      showLink();
      connect();
    }
  }, 1000);

  function live() {
    const table = ui.now && ui.now.table;
    return ui.connected && ui.now && ui.now.broker === "connected" && table && table.live;
  }

  function showLink() {
    let text = "console unreachable: reconnecting…";
    let css = "down";
    if (live()) { text = "live"; css = "up"; }
    else if (ui.connected && ui.now && ui.now.broker !== "connected") text = "no broker: do not deal";
    else if (ui.connected) text = "table not live: do not deal";
    link.textContent = text;
    link.className = "link " + css;
  }

  // ------------------------------------------------------------------ requests
  async function post(path, body) {
    ui.busy = true;
    draw();
    let outcome;
    try {
      const response = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body || {}),
        credentials: "same-origin",
      });
      if (response.status === 401) { window.location.href = "login"; return null; }
      outcome = response.ok ? await response.json() : { status: "error", message: await response.text() };
    } catch (error) {
      outcome = { status: "offline", message: "the console did not answer: nothing may have been sent; wait until the top corner says live" };
    }
    ui.busy = false;
    ui.message = outcome.status === "ok" ? null : outcome;
    draw();
    return outcome;
  }

  function send(command, fields) { return post("request/" + command, fields); }

  // Exact cents: "25.00" → 2500.
  function cents(amount) {
    const [whole, part = "0"] = String(amount).split(".");
    return parseInt(whole, 10) * 100 + parseInt((part + "0").slice(0, 2), 10);
  }
  function dollars(value) { return Math.floor(value / 100) + "." + String(value % 100).padStart(2, "0"); }
  function money(value) { return "$" + Math.floor(value / 100).toLocaleString("en-US") + "." + String(value % 100).padStart(2, "0"); }

  function addChip(seat, wager) {
    const current = cents(((ui.now.wagers || {})[String(seat)] || {})[wager.kind] || "0");
    const amount = current + cents(ui.setup.chips[ui.chip]);
    if (amount < cents(wager.min) || amount > cents(wager.max)) {
      ui.message = {
        status: "error",
        message: `seat ${seat} ${wager.name} ${money(amount)}: outside the table's limits, ${wager.limits}`,
      };
      draw();
      return;
    }
    send("wager", { seat, kind: wager.kind, amount: dollars(amount) });
  }

  // ------------------------------------------------------------------ building blocks
  function el(tag, css, text) {
    const node = document.createElement(tag);
    if (css) node.className = css;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function button(text, css, action, { disabled = false, name = null } = {}) {
    const node = el("button", "button " + (css || ""), text);
    node.type = "button";
    node.disabled = disabled || ui.busy;
    if (name) node.dataset.name = name;
    node.addEventListener("click", action);
    return node;
  }

  function card(code) {
    if (code === null) {
      const down = el("span", "card down");
      down.setAttribute("aria-label", "face-down card");
      return down;
    }
    const suit = code.slice(-1);
    return el("span", "card" + (suit === "H" || suit === "D" ? " red" : ""), code.slice(0, -1) + (SUITS[suit] || suit));
  }

  // ------------------------------------------------------------------ the page
  function draw() {
    if (!ui.setup || !ui.now) return;
    const setup = ui.setup;
    title.textContent = `${setup.table} · ${setup.game_name}`;
    who.textContent = "dealer: " + setup.dealer_name;
    showLink();
    const round = ui.now.table && ui.now.table.round;
    const side = el("aside", "side");
    side.append(doubts(), settlements());
    main.replaceChildren(controls(round), dealerRow(round), chipTray(), seats(round), side);
  }

  function doubts() {
    const box = el("section", "doubts");
    box.id = "doubts";
    const now = ui.now;
    if (ui.message) box.append(el("p", "alert " + (ui.message.status === "error" ? "refused" : "fault"), ui.message.message));
    (now.table ? now.table.alerts : []).forEach((alert) => {
      const item = el("div", "alert " + alert.class);
      item.append(el("span", "label", alert.label), document.createTextNode(alert.text));
      if (alert.advice) item.append(el("p", "advice", "What to do: " + alert.advice));
      box.append(item);
    });
    if (!now.table) box.append(el("p", "alert offline", "nothing heard of this table yet: do not deal"));
    if (now.doubt) {
      const item = el("div", "alert review doubt");
      item.append(el("span", "label", "HOLD"), document.createTextNode(now.doubt.text), el("p", "advice", "What to do: " + now.doubt.advice));
      box.append(item);
    }
    now.unanswered.forEach((sent) => {
      const item = el("div", "alert fault unanswered");
      item.dataset.transaction = sent.transaction;
      item.append(el("span", "label", "NO ANSWER"), document.createTextNode(sent.what + ": " + sent.advice));
      const row = el("div", "row");
      row.append(
        button("Send again", "go", () => post("again/" + sent.transaction), { disabled: !sent.may_again, name: "again" }),
        button("Let it go", "", () => post("forget/" + sent.transaction), { name: "forget" }),
      );
      item.append(row);
      box.append(item);
    });
    return box;
  }

  function controls(round) {
    const bar = el("section", "controls");
    const now = ui.now;
    const open = now.betting_open || !round || round.stage === "over";
    bar.append(
      button("No more bets", "go big", () => send("close_betting"), { disabled: !now.betting_open, name: "close_betting" }),
      button("Enter card", now.awaiting_entry ? "entry big" : "", () => { ui.entry.open = !ui.entry.open; draw(); }, { name: "enter_card" }),
      button("Shuffle", "", () => send("shuffle"), { name: "shuffle" }),
      button("Status", "", () => send("status"), { name: "status" }),
      button(ui.voidArmed ? "Tap again to void" : "Void round", "danger", voidRound, { name: "void" }),
    );
    bar.dataset.betting = open ? "open" : "closed";
    const panels = el("div", "panels");
    if (ui.entry.open || now.awaiting_entry) panels.append(cardEntry());
    if (now.doubt) panels.append(resumePanel());
    bar.append(panels);
    return bar;
  }

  function voidRound() {
    if (!ui.voidArmed) {
      ui.voidArmed = true;
      setTimeout(() => { ui.voidArmed = false; draw(); }, 5000);
      draw();
      return;
    }
    ui.voidArmed = false;
    send("void", { reason: "voided at the dealer console" });
  }

  function cardEntry() {
    const panel = el("div", "panel entry-panel");
    panel.append(el("h3", "", ui.now.awaiting_entry ? "Enter the unreadable card: read its face" : "Enter a card that went by unread"));
    const ranks = el("div", "keys ranks");
    RANKS.forEach((rank) => ranks.append(button(rank, ui.entry.rank === rank ? "chosen" : "", () => { ui.entry.rank = rank; draw(); }, { name: "rank-" + rank })));
    const suits = el("div", "keys suits");
    Object.entries(SUITS).forEach(([code, symbol]) => suits.append(button(symbol, (ui.entry.suit === code ? "chosen " : "") + (code === "H" || code === "D" ? "red" : ""), () => { ui.entry.suit = code; draw(); }, { name: "suit-" + code })));
    const chosen = ui.entry.rank && ui.entry.suit ? ui.entry.rank + ui.entry.suit : null;
    const go = button(chosen ? "Enter " + ui.entry.rank + SUITS[ui.entry.suit] : "Enter", "go", async () => {
      const outcome = await send("card", { card: chosen });
      if (outcome && outcome.status === "ok") { ui.entry = { open: false, rank: null, suit: null }; draw(); }
    }, { disabled: !chosen, name: "enter" });
    panel.append(ranks, suits, go);
    return panel;
  }

  function counter(label, key) {
    const row = el("div", "counter");
    row.append(
      el("span", "", label),
      button("−", "", () => { ui.resume[key] = Math.max(0, ui.resume[key] - 1); draw(); }, { name: key + "-less" }),
      el("span", "count", ui.resume[key]),
      button("+", "", () => { ui.resume[key] += 1; draw(); }, { name: key + "-more" }),
    );
    return row;
  }

  function resumePanel() {
    const panel = el("div", "panel resume-panel");
    panel.append(el("h3", "", "Resolve the held cards"), counter("set aside (no round's)", "discard"));
    if (ui.now.doubt.reason === "unheard_shuffle") panel.append(counter("burned while unheard", "burned"));
    panel.append(button("Confirm", "go big", async () => {
      const fields = {};
      if (ui.resume.discard) fields.discard = ui.resume.discard;
      if (ui.resume.burned) fields.burned = ui.resume.burned;
      const outcome = await send("resume", fields);
      if (outcome && outcome.status === "ok") { ui.resume = { discard: 0, burned: 0 }; draw(); }
    }, { name: "resume" }));
    return panel;
  }

  function dealerRow(round) {
    const row = el("section", "dealer");
    row.append(el("span", "name", "Dealer"));
    const stage = el("span", "stage", round ? `round ${round.id}: ${round.stage_name}` : "no round: place the wagers");
    if (round) {
      const cards = el("span", "cards");
      round.dealer.cards.forEach((code) => cards.append(card(code)));
      row.append(cards);
      if (round.dealer.total !== null && round.dealer.total !== undefined) row.append(el("span", "total", round.dealer.total));
    }
    row.append(stage);
    return row;
  }

  function chipTray() {
    const tray = el("section", "chips");
    tray.append(el("span", "label", "chip"));
    ui.setup.chip_names.forEach((name, index) => {
      tray.append(button(name, "chip" + (index === ui.chip ? " chosen" : ""), () => { ui.chip = index; draw(); }, { name: "chip-" + index }));
    });
    return tray;
  }

  function seats(round) {
    const grid = el("section", "console-seats");
    const turn = ui.now.turn;
    const seatViews = {};
    (round ? round.seats : []).forEach((seat) => { seatViews[seat.seat] = seat; });
    for (let number = 1; number <= ui.setup.seats; number += 1) {
      const box = el("div", "seat console-seat");
      box.id = "seat-" + number;
      box.append(el("h3", "seat-number", "Seat " + number));
      const placed = (ui.now.wagers || {})[String(number)] || {};
      const idle = round && !ui.now.betting_open && round.stage !== "over" && !Object.keys(placed).length;
      if (idle) {
        box.classList.add("idle");
        box.append(el("span", "no-wager", "no wager this round"));
      } else {
        ui.setup.wagers.forEach((wager) => box.append(wagerRow(number, wager, placed[wager.kind])));
      }
      const seat = seatViews[number];
      (seat ? seat.hands : []).forEach((hand) => box.append(handRow(number, hand, turn)));
      grid.append(box);
    }
    return grid;
  }

  function wagerRow(seat, wager, amount) {
    const row = el("div", "wager-row");
    row.dataset.kind = wager.kind;
    const name = el("span", "wager-name", wager.name);
    name.title = wager.window;
    const limits = el("span", "limits", wager.limits);
    const shown = el("span", "amount", amount ? money(cents(amount)) : "—");
    const chip = ui.setup.chip_names[ui.chip];
    row.append(
      name, limits, shown,
      button("+" + chip, "add", () => addChip(seat, wager), { name: `add-${seat}-${wager.kind}` }),
      button("✕", "take", () => send("withdraw", { seat, kind: wager.kind }), { disabled: !amount, name: `withdraw-${seat}-${wager.kind}` }),
    );
    return row;
  }

  function handRow(seat, hand, turn) {
    const box = el("div", "hand");
    const inTurn = turn && turn.seat === seat && turn.hand === hand.hand;
    if (inTurn) box.classList.add("turn");
    const cards = el("span", "cards");
    hand.cards.forEach((code) => cards.append(card(code)));
    let total = hand.total === null || hand.total === undefined ? "" : (hand.soft ? "soft " : "") + hand.total;
    if (hand.doubled) total += ", doubled";
    if (hand.ended) total += ", " + hand.ended;
    box.append(cards, el("span", "total", total));
    if (inTurn) {
      const drawing = (ui.now.drawing || []).some((d) => d.seat === seat && d.hand === hand.hand);
      const row = el("div", "decisions");
      if (drawing) row.append(el("span", "waiting", "deal the card"));
      ui.setup.actions.forEach((action) => {
        row.append(button(DECISIONS[action] || action, "decision", () => send("action", { seat, action, hand: hand.hand }), { name: "action-" + action }));
      });
      box.append(row);
    }
    return box;
  }

  function settlements() {
    const box = el("section", "pay");
    const lines = ui.now.table ? ui.now.table.settlements : [];
    box.append(el("h3", "", lines.length ? "Pay and collect, in this order" : "Pay and collect: nothing settled yet"));
    const list = el("ol", "settlements");
    lines.forEach((line) => {
      const item = el("li", `settlement ${line.result}` + (line.floorperson ? " floor" : "") + (line.review ? " review" : ""));
      item.dataset.key = line.key;
      item.dataset.text = line.text;
      item.append(el("span", "who", line.who), el("span", "what", line.what), el("span", "act", line.action));
      list.append(item);
    });
    box.append(list);
    const notices = ui.now.table ? ui.now.table.notices : [];
    if (notices.length) {
      const said = el("ul", "notices");
      notices.slice(-6).forEach((notice) => {
        const item = el("li", "notice " + notice.class);
        item.append(el("span", "label", notice.label), document.createTextNode(notice.text));
        said.append(item);
      });
      box.append(said);
    }
    return box;
  }

  connect();
})();
