// shoe2mqtt display: lays out what the display process sends over Server-Sent Events.
// Every word and amount is made by the server (daemon/display/model.py); this only builds
// the page from it, with textContent throughout (no HTML from data). No library, no build.
"use strict";

(() => {
  const HEARTBEAT_MS = 5000; // the server's `beat` interval (daemon/web/stream.py)
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const body = document.body;
  const view = body.dataset.view;
  if (view === "numbers") return; // a table's numbers page: numbers.js draws it
  const only = body.dataset.table || null;
  const main = document.getElementById("main");
  const link = document.getElementById("link");
  const clock = document.getElementById("clock");

  const state = { tables: {}, broker: "connecting", connected: false, lastHeard: 0 };
  const openHistory = new Map(); // table id → the rounds last fetched, while it is open
  let source = null;

  // ------------------------------------------------------------------ the stream
  function connect() {
    source = new EventSource(only ? "events?table=" + encodeURIComponent(only) : "events");
    source.addEventListener("full", (event) => {
      const data = JSON.parse(event.data);
      state.tables = data.tables; // what the display knows replaces what the page had
      heard(data.broker);
      render();
    });
    source.addEventListener("update", (event) => {
      const data = JSON.parse(event.data);
      Object.assign(state.tables, data.tables);
      heard(data.broker);
      Object.keys(data.tables).forEach((id) => pending.add(id));
      // Drawn once per frame: a burst of settlements is one layout, not one each.
      if (!frame) frame = requestAnimationFrame(drawPending);
    });
    source.addEventListener("beat", (event) => heard(JSON.parse(event.data).broker));
    source.addEventListener("error", () => {
      lost();
      if (source.readyState === EventSource.CLOSED) {
        // An HTTP error (a proxy's 502) ends EventSource's own retrying: retry here.
        setTimeout(connect, 2000);
      }
    });
  }

  function heard(broker) {
    const changed = !state.connected || state.broker !== broker;
    state.connected = true;
    state.broker = broker;
    state.lastHeard = Date.now();
    if (changed) showLink();
  }

  function lost() {
    if (!state.connected) return;
    state.connected = false;
    showLink();
    render(); // every table now shows that the page cannot know whether it is live
  }

  // A connection can die without closing (a cable pulled between page and display).
  setInterval(() => {
    if (state.connected && Date.now() - state.lastHeard > 3 * HEARTBEAT_MS) {
      source.close();
      lost();
      connect();
    }
  }, 1000);

  function showLink() {
    let text = "display unreachable: reconnecting…";
    let css = "down";
    if (state.connected && state.broker === "connected") {
      text = "live";
      css = "up";
    } else if (state.connected) {
      text = "display has lost the broker: reconnecting…";
    }
    link.textContent = text;
    link.className = "link " + css;
  }

  // ------------------------------------------------------------------ building blocks
  function el(tag, css, text) {
    const node = document.createElement(tag);
    if (css) node.className = css;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function card(code) {
    if (code === null) {
      const down = el("span", "card down");
      down.setAttribute("aria-label", "face-down card");
      return down;
    }
    const suit = code.slice(-1);
    const face = el("span", "card" + (suit === "H" || suit === "D" ? " red" : ""));
    face.textContent = code.slice(0, -1) + (SUITS[suit] || suit);
    return face;
  }

  function cards(codes) {
    const row = el("span", "cards");
    codes.forEach((code) => row.append(card(code)));
    return row;
  }

  // Live, OFFLINE, or CONTESTED: two daemons claim the table (neither live nor offline).
  function liveness(table) {
    if (!state.connected) return { live: false, css: "offline", label: "OFFLINE", text: "the page has lost the display" };
    if (table.live) return { live: true, css: "live", label: "LIVE", text: table.availability };
    if (table.contested) return { live: false, css: "contested", label: "CONTESTED", text: table.availability };
    return { live: false, css: "offline", label: "OFFLINE", text: table.availability };
  }

  function badge(table) {
    const status = liveness(table);
    const node = el("span", "badge " + status.css);
    node.textContent = status.label;
    return node;
  }

  function alerts(table) {
    const list = el("ul", "alerts");
    const status = liveness(table);
    const items = table.alerts.filter((alert) => alert.class !== "offline" && alert.class !== "contested");
    if (!status.live) items.unshift({ class: status.css, label: status.label, text: status.text });
    items.forEach((alert) => {
      const item = el("li", "alert " + alert.class);
      item.append(el("strong", "label", alert.label), " ", el("span", "text", alert.text));
      list.append(item);
    });
    return list;
  }

  function settlements(table) {
    const list = el("ol", "settlements");
    table.settlements.forEach((s) => {
      let css = "settlement " + s.result;
      if (s.floorperson) css += " floor";
      if (s.review) css += " review";
      const item = el("li", css);
      item.dataset.key = s.key;
      item.dataset.text = s.text;
      const what = s.what.replace(/(\d+) to (\d+)/, "$1\u00a0to\u00a0$2"); // odds on one line
      item.append(el("span", "who", s.who), " ", el("span", "what", what), " ");
      item.append(el("span", "act", s.action));
      if (s.floorperson) item.append(el("strong", "flag", "FLOORPERSON"));
      if (s.review) item.append(el("strong", "flag", "REVIEW"));
      list.append(item);
    });
    if (!table.settlements.length) list.append(el("li", "empty", "nothing settled yet"));
    return list;
  }

  function notices(table) {
    const list = el("ul", "notices");
    table.notices
      .concat(table.table_notices)
      .filter((n) => n.kind !== "floorperson_required") // shown as an alert above
      .slice(view === "pit" ? -3 : -6)
      .forEach((n) => {
        const item = el("li", "notice " + n.class);
        item.append(el("strong", "label", n.label), " ", el("span", "text", n.text));
        list.append(item);
      });
    return list;
  }

  function roundLine(table) {
    const round = table.round;
    const parts = [table.reader.text];
    if (round) parts.push("round " + round.id, round.stage_name);
    return el("p", "round-line", parts.join(" · "));
  }

  function dealer(round) {
    const row = el("div", "dealer");
    row.append(el("span", "name", "Dealer"), cards(round.dealer.cards));
    if (round.dealer.total !== null) row.append(el("span", "total", round.dealer.total));
    return row;
  }

  function seats(round) {
    const grid = el("div", "seats");
    round.seats.forEach((seat) => {
      const box = el("section", "seat");
      box.append(el("h3", "seat-number", "seat " + seat.seat));
      const wagers = el("ul", "wagers");
      seat.wagers.forEach((w) => wagers.append(el("li", null, w.name + " " + w.amount)));
      box.append(wagers);
      seat.hands.forEach((hand) => {
        const row = el("div", "hand" + (hand.turn ? " turn" : ""));
        row.append(cards(hand.cards));
        let total = String(hand.total) + (hand.soft ? " soft" : "");
        if (hand.doubled && hand.ended !== "doubled") total += ", doubled";
        if (hand.ended) total += ", " + hand.ended;
        row.append(el("span", "total", total));
        box.append(row);
      });
      grid.append(box);
    });
    return grid;
  }

  function historyPanel(table) {
    const panel = el("div", "history");
    const button = el("button", "history-button");
    const rounds = openHistory.get(table.table);
    button.type = "button";
    button.textContent = rounds ? "hide last rounds" : "last rounds (" + table.history + ")";
    button.disabled = !table.history;
    button.addEventListener("click", () => toggleHistory(table.table));
    panel.append(button);
    (rounds || []).forEach((record) => {
      const block = el("section", "past");
      const title = el("h4", null, "round " + record.round + " · dealer ");
      title.append(cards(record.dealer));
      block.append(title);
      block.append(settlements({ settlements: record.settlements }));
      panel.append(block);
    });
    return panel;
  }

  async function toggleHistory(id) {
    if (openHistory.has(id)) {
      openHistory.delete(id);
    } else {
      const response = await fetch("history/" + encodeURIComponent(id), { cache: "no-store" });
      openHistory.set(id, response.ok ? await response.json() : []);
    }
    render();
  }

  // ------------------------------------------------------------------ the two views
  // A table's box and its heading: id, game, LIVE or OFFLINE, the reader and the round,
  // and what must stand out.
  function tableBox(table, css) {
    const status = liveness(table);
    const box = el("article", "table " + css + (status.live ? "" : " " + status.css));
    box.id = "table-" + table.table;
    box.dataset.table = table.table;
    const head = el("header", "table-head");
    head.append(el("h2", "table-id", table.table), el("span", "game", table.game_name));
    head.append(badge(table));
    box.append(head, roundLine(table), alerts(table));
    return box;
  }

  function tableCard(table) {
    const box = tableBox(table, "pit-view");
    if (table.round) box.append(dealer(table.round));
    box.append(settlements(table), notices(table), historyPanel(table), shiftLine(table));
    return box;
  }

  // The shift's pace and bonus result (<table>/stats), and the way to the numbers page.
  function shiftLine(table) {
    const line = el("p", "shift");
    const shift = table.shift;
    const more = el("a", "numbers-link", "numbers");
    more.href = "numbers/" + encodeURIComponent(table.table);
    if (!shift) {
      line.append(el("span", "pace", "shift: no round yet"), more);
      return line;
    }
    line.append(el("span", "pace", `shift ${shift.rounds} round${shift.rounds === 1 ? "" : "s"} · ${shift.pace}`));
    shift.wagers.forEach((w) => line.append(el("span", w.alert ? "bonus off" : "bonus", w.text)));
    line.append(more);
    return line;
  }

  function tablePage(table) {
    const page = tableBox(table, "dealer-view");
    const play = el("div", "play");
    if (table.round) play.append(dealer(table.round), seats(table.round));
    else play.append(el("p", "empty", "no round yet"));
    page.append(play, settlements(table), notices(table));
    return page;
  }

  const pending = new Set();
  let frame = 0;
  function drawPending() {
    frame = 0;
    const changed = [...pending];
    pending.clear();
    render(changed);
  }

  // Only the tables that changed are built again; the rest of the page stays as it is.
  function render(changed) {
    if (view === "table") {
      const table = state.tables[only];
      main.replaceChildren(
        table ? tablePage(table) : el("p", "waiting", "waiting for table " + only + "…"),
      );
    } else {
      const ids = Object.keys(state.tables).sort();
      const shown = [...main.children].map((node) => node.dataset.table);
      if (changed && shown.join() === ids.join()) {
        changed.forEach((id) => document.getElementById("table-" + id).replaceWith(tableCard(state.tables[id])));
      } else {
        main.replaceChildren(...ids.map((id) => tableCard(state.tables[id])));
        if (!ids.length) main.append(el("p", "waiting", "waiting for tables…"));
      }
      document.documentElement.style.setProperty("--tables", String(Math.max(1, ids.length)));
    }
    fit();
  }

  // A kiosk cannot scroll: the type shrinks (--scale, in twentieths) to the largest size at
  // which the page fits the screen, and grows back when there is room again. Below 0.4 the
  // page scrolls: nothing is ever cut. Each size tried lays the whole page out again, 8-15 ms
  // in a kiosk's software-drawn browser (tried a twentieth at a time from the last size, the
  // fit held a seven-seat round's settlements 50 ms), so the first size tried is the
  // proportion's (the page's height follows its type about in proportion) and the others
  // only correct it; and the smallest size known to overflow stays known while the page
  // only grows, so a page that still fits after a change costs the one layout it needed.
  const WHOLE = 20;
  const SMALLEST = 8;
  const fitted = { twentieths: WHOLE, over: WHOLE + 1, height: 0, room: 0 };
  function fit() {
    const root = document.documentElement;
    const room = window.innerHeight + 1;
    const height = () => document.body.getBoundingClientRect().height;
    const set = (twentieths) => {
      fitted.twentieths = twentieths;
      root.style.setProperty("--scale", String(twentieths / WHOLE));
    };
    const fits = () => {
      if (root.scrollHeight > room) {
        fitted.over = fitted.twentieths;
        return false;
      }
      fitted.height = height();
      return true;
    };
    const shown = height();
    // Less to show, or another screen: a size that overflowed may fit now.
    if (shown < fitted.height - 1 || room !== fitted.room) fitted.over = WHOLE + 1;
    fitted.room = room;
    if (fits() && fitted.twentieths + 1 >= fitted.over) return;
    const guess = Math.floor((fitted.twentieths * room) / Math.max(1, shown));
    const first = Math.max(SMALLEST, Math.min(fitted.over - 1, guess));
    if (first !== fitted.twentieths) set(first);
    while (!fits() && fitted.twentieths > SMALLEST) set(fitted.twentieths - 1);
    while (fitted.twentieths + 1 < fitted.over) {
      set(fitted.twentieths + 1);
      if (!fits()) set(fitted.twentieths - 1);
    }
  }

  function tick() {
    clock.textContent = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  window.addEventListener("resize", () => render());
  setInterval(tick, 1000);
  tick();
  showLink();
  render();
  connect();
})();
