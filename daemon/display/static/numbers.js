// shoe2mqtt display: a table's numbers page. Draws the table's retained <table>/stats (the
// current shift, docs/numbers.md) and <table>/days (its last closed days) as SVG made here,
// in the page: no library, no CDN. Both are fetched from the display (stats/<table>,
// days/<table>) when the page loads and again whenever the display's stream says the table
// changed, so a reload shows the whole shift and the days at once.
"use strict";

(() => {
  const body = document.body;
  if (body.dataset.view !== "numbers") return;
  const table = body.dataset.table;
  const main = document.getElementById("main");
  const link = document.getElementById("link");
  // SVG's namespace, as the HTML parser gives it (no address written here to load from).
  const holder = document.createElement("div");
  holder.innerHTML = "<svg></svg>";
  const SVG = holder.firstChild.namespaceURI;
  const WIDTH = 900;
  const HEIGHT = 260;
  const PAD = 44;

  function el(tag, css, text) {
    const node = document.createElement(tag);
    if (css) node.className = css;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svg(tag, attributes, text) {
    const node = document.createElementNS(SVG, tag);
    Object.entries(attributes || {}).forEach(([k, v]) => node.setAttribute(k, String(v)));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function percent(value) {
    return value === null || value === undefined ? "–" : (100 * value).toFixed(1) + "%";
  }

  function dollars(cents) {
    const sign = cents < 0 ? "-" : "";
    const whole = Math.floor(Math.abs(cents) / 100).toLocaleString("en-US");
    return sign + "$" + whole + "." + String(Math.abs(cents) % 100).padStart(2, "0");
  }

  // A chart: x from 0 to n-1, y from lo to hi; `series` are [name, css, values (null: none)].
  function chart(title, n, lo, hi, series, yLabel) {
    const box = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", class: "chart" });
    box.append(svg("title", {}, title));
    const x = (i) => PAD + (n > 1 ? (i * (WIDTH - 2 * PAD)) / (n - 1) : (WIDTH - 2 * PAD) / 2);
    const y = (v) => HEIGHT - PAD - ((v - lo) * (HEIGHT - 2 * PAD)) / (hi - lo || 1);
    box.append(svg("line", { x1: PAD, x2: WIDTH - PAD, y1: y(lo), y2: y(lo), stroke: "#556" }));
    [lo, (lo + hi) / 2, hi].forEach((v) => {
      box.append(svg("text", { x: 4, y: y(v) + 4 }, yLabel(v)));
      box.append(svg("line", { x1: PAD, x2: WIDTH - PAD, y1: y(v), y2: y(v), stroke: "#223" }));
    });
    series.forEach(([name, css, values, colour, dashed]) => {
      const points = values.map((v, i) => (v === null ? null : `${x(i).toFixed(1)},${y(v).toFixed(1)}`));
      const drawn = points.filter((p) => p !== null);
      if (!drawn.length) return;
      const line = svg("polyline", {
        points: drawn.join(" "), fill: "none", stroke: colour, "stroke-width": 2, class: css,
      });
      if (dashed) line.setAttribute("stroke-dasharray", "6 4");
      line.append(svg("title", {}, name));
      box.append(line);
    });
    box.append(svg("text", { x: PAD, y: 14 }, title));
    return box;
  }

  function holdChart(wager, history) {
    const rows = history.map((r) => (r.holds || {})[wager] || [null, null, null, null]);
    const values = rows.flat().filter((v) => v !== null && Number.isFinite(v));
    if (!values.length) return null;
    const lo = Math.max(Math.min(...values), -5);
    const hi = Math.min(Math.max(...values), 1);
    const clip = (v) => (v === null ? null : Math.min(Math.max(v, lo), hi));
    return chart(
      wager.replaceAll("_", " ") + ": hold over the shift, inside its band around the theoretical hold",
      rows.length, lo, hi,
      [
        ["band, low", "band-low", rows.map((r) => clip(r[1])), "#6b7f99", true],
        ["band, high", "band-high", rows.map((r) => clip(r[2])), "#6b7f99", true],
        ["theoretical hold", "theory", rows.map((r) => clip(r[3])), "#9fd69f", false],
        ["hold", "hold", rows.map((r) => clip(r[0])), "#ffd34d", false],
      ],
      (v) => (100 * v).toFixed(0) + "%",
    );
  }

  // Each closed day's hold (a dot) inside its band (a bar) around the theoretical hold (a
  // dash), one column a day; the band is clipped to the chart as the shift's is.
  function dayHoldChart(wager, days) {
    const rows = days.map((d) => [d.day, (d.wagers || []).find((w) => w.wager === wager)]);
    const values = rows.flatMap(([, w]) => (w ? [w.hold, w.theoretical_hold, ...(w.band || [])] : []))
      .filter((v) => v !== null && v !== undefined && Number.isFinite(v));
    if (!values.length) return null;
    const lo = Math.max(Math.min(...values), -5);
    const hi = Math.min(Math.max(...values), 1);
    const clip = (v) => Math.min(Math.max(v, lo), hi);
    const y = (v) => HEIGHT - PAD - ((clip(v) - lo) * (HEIGHT - 2 * PAD)) / (hi - lo || 1);
    const title = wager.replaceAll("_", " ") + ": hold per day, inside its band around the theoretical hold";
    const box = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", class: "chart days-hold" });
    box.append(svg("title", {}, title), svg("text", { x: PAD, y: 14 }, title));
    [lo, (lo + hi) / 2, hi].forEach((v) => {
      box.append(svg("text", { x: 4, y: y(v) + 4 }, (100 * v).toFixed(0) + "%"));
      box.append(svg("line", { x1: PAD, x2: WIDTH - PAD, y1: y(v), y2: y(v), stroke: "#223" }));
    });
    const width = (WIDTH - 2 * PAD) / Math.max(rows.length, 1);
    rows.forEach(([day, w], i) => {
      const middle = PAD + (i + 0.5) * width;
      box.append(svg("text", { x: middle - 14, y: HEIGHT - PAD + 14 }, day.slice(5)));
      if (!w || w.hold === null) return;
      if (w.band) {
        box.append(svg("rect", {
          x: middle - 6, width: 12, y: y(w.band[1]), height: Math.max(y(w.band[0]) - y(w.band[1]), 1),
          fill: "#2e3d52", stroke: "#6b7f99", class: "day-band",
        }));
      }
      if (w.theoretical_hold !== null) {
        box.append(svg("line", {
          x1: middle - 10, x2: middle + 10, y1: y(w.theoretical_hold), y2: y(w.theoretical_hold),
          stroke: "#9fd69f", "stroke-width": 2, class: "day-theory",
        }));
      }
      const dot = svg("circle", {
        cx: middle, cy: y(w.hold), r: 5, fill: w.alert ? "#ff8c1a" : "#ffd34d", class: "day-hold",
        "data-day": day, "data-hold": w.hold,
      });
      dot.append(svg("title", {}, `${day}: hold ${percent(w.hold)}, theoretical ` +
        `${percent(w.theoretical_hold)}` + (w.band ? `, band [${percent(w.band[0])}, ${percent(w.band[1])}]` : "")));
      box.append(dot);
    });
    return box;
  }

  // Bars: one a label, its value written above it.
  function bars(css, title, labels, values, top, tip) {
    const box = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", class: "chart " + css });
    box.append(svg("title", {}, title), svg("text", { x: PAD, y: 14 }, title));
    const width = (WIDTH - 2 * PAD) / Math.max(labels.length, 1);
    values.forEach((value, i) => {
      const h = (value * (HEIGHT - 2 * PAD)) / top;
      const bar = svg("rect", {
        x: PAD + i * width + 2, y: HEIGHT - PAD - h, width: Math.max(width - 4, 1), height: h,
        fill: "#4a7ab5", class: "bar", "data-label": labels[i], "data-value": value,
      });
      bar.append(svg("title", {}, tip(labels[i], value)));
      box.append(bar);
      box.append(svg("text", { x: PAD + i * width + 4, y: HEIGHT - PAD + 14 }, labels[i]));
      box.append(svg("text", { x: PAD + i * width + 4, y: HEIGHT - PAD - h - 4 }, value.toFixed(0)));
    });
    return box;
  }

  function daysCharts(days) {
    const section = el("section", "days");
    section.append(el("h2", null, "The last days (" + days.length + " closed)"));
    if (!days.length) {
      section.append(el("p", "empty", "no closed day with a round yet"));
      return section;
    }
    const wagers = [...new Set(days.flatMap((d) => (d.wagers || []).map((w) => w.wager)))].sort();
    wagers.forEach((wager) => {
      const plot = dayHoldChart(wager, days);
      if (plot) section.append(plot);
    });
    const pace = days.map((d) => d.rounds_per_hour || 0);
    section.append(bars(
      "days-pace", "rounds per hour of play, per gaming day", days.map((d) => d.day.slice(5)), pace,
      Math.max(60, ...pace), (label, value) => `${label}: ${value.toFixed(1)} rounds an hour`,
    ));
    return section;
  }

  function paceChart(history) {
    const hours = new Map();
    history.forEach((r) => {
      const hour = r.started.slice(0, 13);
      hours.set(hour, (hours.get(hour) || 0) + 1);
    });
    const labels = [...hours.keys()];
    const counts = labels.map((h) => hours.get(h));
    return bars(
      "pace", "rounds per hour (UTC hours of the shift)", labels.map((h) => h.slice(11) + "h"), counts,
      Math.max(60, ...counts), (label, count) => `${label} ${count} rounds`,
    );
  }

  function roundsTable(history) {
    const grid = el("table", "rounds");
    const head = el("tr");
    ["round", "started", "seconds", "seats", "dealer", "bonus handle", "house win"].forEach((h) =>
      head.append(el("th", null, h)),
    );
    grid.append(head);
    history.slice(-50).reverse().forEach((r) => {
      const row = el("tr", "round-row");
      row.dataset.round = r.round;
      [r.round, r.started.slice(11, 19), r.seconds, r.seats, r.dealer || "–",
        dollars(r.handle_cents), dollars(r.house_win_cents)].forEach((v) => row.append(el("td", null, String(v))));
      grid.append(row);
    });
    return grid;
  }

  function draw(stats, days) {
    const page = el("section", "numbers");
    page.append(el("h2", null, "Table " + table + " · shift " + (stats.shift || "–")));
    const numbers = stats.numbers;
    if (!numbers) {
      page.append(el("p", "empty", "no round counted this shift yet"));
      if (days) page.append(daysCharts(days.days || []));
      main.replaceChildren(page);
      return;
    }
    const facts = el("p", "facts");
    facts.append(
      el("span", "rounds", numbers.rounds + " rounds"),
      el("span", "pace", (numbers.rounds_per_hour || 0).toFixed(1) + " rounds an hour"),
      el("span", null, "seats " + (numbers.seats_in_play || 0).toFixed(1)),
      el("span", null, "shoes " + numbers.shoes + ", penetration " + percent(numbers.penetration)),
    );
    page.append(facts);
    numbers.wagers.forEach((w) => {
      const line = el("p", "wager");
      line.dataset.wager = w.wager;
      line.textContent = `${w.wager.replaceAll("_", " ")}: handle ${dollars(w.handle_cents)}, ` +
        `players won ${dollars(w.players_won_cents)}, house win ${dollars(w.house_win_cents)}, ` +
        `hold ${percent(w.hold)}; theoretical ${percent(w.theoretical_hold)}` +
        (w.band ? `, band [${percent(w.band[0])}, ${percent(w.band[1])}]` : "");
      page.append(line);
      if (w.alert) page.append(el("p", "alert", "ALERT: " + w.alert));
      const plot = holdChart(w.wager, stats.history);
      if (plot) page.append(plot);
    });
    page.append(paceChart(stats.history));
    if (days) page.append(daysCharts(days.days || []));
    page.append(el("h2", null, "The shift's last rounds"), roundsTable(stats.history));
    main.replaceChildren(page);
  }

  let asked = null;
  async function refresh() {
    if (asked) return asked;
    asked = (async () => {
      try {
        const [response, closed] = await Promise.all(["stats/", "days/"].map(
          (path) => fetch(path + encodeURIComponent(table), { cache: "no-store" })));
        const stats = response.ok ? await response.json() : null;  // null: none yet
        const days = closed.ok ? await closed.json() : null;
        if (stats) draw(stats, days);
        else if (days) draw({ shift: null, numbers: null, history: [] }, days);
        else main.replaceChildren(el("p", "waiting", "no numbers for table " + table + " yet…"));
      } finally {
        asked = null;
      }
    })();
    return asked;
  }

  const source = new EventSource("events?table=" + encodeURIComponent(table));
  source.addEventListener("full", () => { link.textContent = "live"; refresh(); });
  source.addEventListener("update", () => refresh());
  source.addEventListener("error", () => { link.textContent = "reconnecting…"; });
  refresh();
})();
