/* arena results site: draws the pages from the data files arena writes.
 *
 * Plain script, no build step, no request to any other site.  Data files are
 * scripts (data/*.js, replays/*.js) that call arenaData(name, value): browsers
 * refuse fetch() of file:// URLs, but not <script src>.  Every text that comes
 * from a bot (names, fault lines, logs) is set as text, never as HTML.  Who may
 * see which card was decided in Python by the engine's observer: a seat's view
 * here only shows the events and tables stored for that seat.
 */
"use strict";

(function () {
  // ---------------------------------------------------------------- loading
  const waiting = {};
  const loaded = {};
  window.arenaData = function (name, value) {
    loaded[name] = value;
    if (waiting[name]) { waiting[name].resolve(value); delete waiting[name]; }
  };

  function load(name, src) {
    if (name in loaded) return Promise.resolve(loaded[name]);
    return new Promise(function (resolve, reject) {
      waiting[name] = { resolve: resolve, reject: reject };
      const script = document.createElement("script");
      script.src = src;
      script.onerror = function () {
        delete waiting[name];
        script.remove();
        reject(new Error("cannot load " + src));
      };
      script.onload = function () {
        script.remove();
        if (waiting[name]) { delete waiting[name]; reject(new Error(src + " holds no " + name)); }
      };
      document.head.appendChild(script);
    });
  }

  const tournament = () => load("tournament", "data/tournament.js");
  const chunk = (k) => load("games-" + pad(k, 4), "data/games-" + pad(k, 4) + ".js");

  // ---------------------------------------------------------------- helpers
  function el(tag, props) {
    const node = document.createElement(tag);
    if (props) {
      for (const key in props) {
        const value = props[key];
        if (value === null || value === undefined || value === false) continue;
        if (key === "text") node.textContent = value;
        else if (key === "class") node.className = value;
        else if (key === "style") Object.assign(node.style, value);
        else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? "" : value);
      }
    }
    for (let i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach((c) => append(node, c)); return; }
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function pad(n, width) { return String(n).padStart(width, "0"); }
  function pct(x, digits) { return x === null || x === undefined ? "" : (100 * x).toFixed(digits || 0) + "%"; }
  function ms(x) {
    if (x === null || x === undefined) return "—";
    if (x >= 100) return Math.round(x) + " ms";
    if (x >= 1) return x.toFixed(1) + " ms";
    return x.toFixed(2) + " ms";
  }
  function params() {
    const out = {};
    new URLSearchParams(location.hash.slice(1)).forEach((v, k) => { out[k] = v; });
    return out;
  }
  function setParams(values, push) {
    const p = new URLSearchParams();
    for (const k in values) if (values[k] !== "" && values[k] !== null && values[k] !== undefined) p.set(k, values[k]);
    const hash = "#" + p.toString();
    if (hash === location.hash) return;
    if (push) history.pushState(null, "", hash); else history.replaceState(null, "", hash);
  }
  function main() { return document.getElementById("main"); }
  function show(...nodes) {
    const m = main();
    m.replaceChildren();
    append(m, nodes);
  }
  function fail(error) {
    show(el("p", { class: "error", role: "alert", text: String(error.message || error) }));
  }
  function section(title, id, ...body) {
    return el("section", { "aria-labelledby": id }, el("h2", { id: id, text: title }), ...body);
  }
  function scroll(table) { return el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": table.getAttribute("aria-label") || "table" }, table); }
  function botLink(t, name) { return el("a", { href: "bot.html#bot=" + encodeURIComponent(name), class: "bot" }, name); }
  function gameLink(id, label, extra) {
    if (!id) return document.createTextNode(label || "—");
    return el("a", { href: "replay.html#game=" + id + (extra || ""), class: "game" }, label || id);
  }
  function setTitle(t, page) {
    document.title = page + " · " + t.title + " · arena";
    const span = document.getElementById("site-title");
    if (span) span.textContent = " · " + t.title;
  }
  const PLACE = (p) => p + (p === 1 ? "st" : p === 2 ? "nd" : p === 3 ? "rd" : "th");
  const END_CODES = ["last_player", "turn_limit", "time_cap"];
  const END_WORDS = { last_player: "last player", turn_limit: "turn limit", time_cap: "time cap" };

  // ---------------------------------------------------------------- cards
  const CARDS = { D: "duke", A: "assassin", C: "captain", T: "contessa", B: "ambassador", I: "inquisitor" };
  function cardChip(letter, extra) {
    if (letter === "?" || letter === null || letter === undefined) {
      return el("span", { class: "card hidden " + (extra || ""), "data-card": "?", title: "a face-down card", "aria-label": "face-down card" }, el("span", { "aria-hidden": "true", text: "?" }));
    }
    const name = CARDS[letter] || letter;
    return el("span", { class: "card c-" + name + " " + (extra || ""), "data-card": letter, title: name }, name);
  }
  function cardWords(letters) {
    if (letters === null || letters === undefined) return null;
    return letters.split("").map((l) => cardChip(l, "small"));
  }

  // ================================================================ index
  async function indexPage() {
    const t = await tournament();
    setTitle(t, "Standings");
    const m = t.meta;
    const players = m.options.players;
    const lead = el("p", { class: "lead" },
      t.rated_games + " games with a result, " + t.h2h.bots.length + " bots, " +
      (players === 2 ? "heads-up" : players + " players a table") + ", " + m.options.variant + " variant, seed " + m.seed + ". ",
      el("a", { href: "games.html" }, "All " + t.games + " games →"));
    show(
      el("h1", { text: "Standings: " + t.title }),
      lead,
      t.notes.length ? el("ul", { class: "notes" }, t.notes.map((n) => el("li", { text: n }))) : null,
      standingsTable(t),
      el("p", { class: "help" },
        "Elo is fitted by maximum likelihood over all games at once (Bradley–Terry, as Ordo and BayesElo do; " +
        (t.anchor ? t.anchor[0] + " is fixed at " + t.anchor[1] : "the mean is 1500") +
        "). The bar is the 95% confidence interval. LOS: the likelihood that a bot is stronger than the next one down. " +
        "W/D/L: first place alone, shared first place, the rest."),
      section("Head-to-head", "h2h", headToHead(t)),
      section("Faults", "faults", faultTable(t)),
      section("Decision times", "times", timesTable(t)),
      t.breakdown.length ? section("By variant and table size", "breakdown", breakdownTable(t)) : null,
      section("The tournament", "settings", settings(t)),
    );
  }

  function standingsTable(t) {
    const rows = t.standings;
    let lo = Infinity, hi = -Infinity;
    rows.forEach((r) => {
      if (r.elo === null) return;
      const ci = r.ci95 || 0;
      lo = Math.min(lo, r.elo - ci); hi = Math.max(hi, r.elo + ci);
    });
    if (hi - lo < 1) { lo -= 50; hi += 50; }
    const span = hi - lo;
    const kinds = t.fault_kinds;
    const head = el("tr", null,
      el("th", { scope: "col", class: "num", text: "#" }), el("th", { scope: "col", text: "bot" }),
      el("th", { scope: "col", class: "num", text: "Elo" }), el("th", { scope: "col", class: "num", text: "± 95%" }),
      el("th", { scope: "col", class: "barcol" }, el("span", { class: "sr", text: "interval" })),
      el("th", { scope: "col", class: "num", text: "LOS" }), el("th", { scope: "col", class: "num", text: "games" }),
      el("th", { scope: "col", class: "num", text: "score" }), el("th", { scope: "col", class: "num", text: "W" }),
      el("th", { scope: "col", class: "num", text: "D" }), el("th", { scope: "col", class: "num", text: "L" }),
      el("th", { scope: "col", class: "num", text: "faults" }), el("th", { scope: "col", text: "note" }));
    const body = rows.map((r) => {
      let bar = null;
      if (r.elo !== null) {
        const ci = r.ci95 || 0;
        const left = (100 * (r.elo - ci - lo)) / span, width = (100 * 2 * ci) / span, mid = (100 * (r.elo - lo)) / span;
        bar = el("div", { class: "elobar", role: "img", "aria-label": Math.round(r.elo) + (r.ci95 !== null ? " ± " + Math.round(ci) : "") },
          el("span", { class: "ci", style: { left: left + "%", width: Math.max(width, 0.5) + "%" } }),
          el("span", { class: "dot", style: { left: mid + "%" } }));
      }
      const faults = kinds.reduce((s, k) => s + ((r["faults_" + k]) || 0), 0);
      return el("tr", { "data-bot": r.bot },
        el("td", { class: "num", "data-key": "rank", text: r.rank }),
        el("th", { scope: "row", "data-key": "bot" }, botLink(t, r.bot)),
        el("td", { class: "num strong", "data-key": "elo", text: r.elo === null ? "—" : Math.round(r.elo) }),
        el("td", { class: "num muted", "data-key": "ci95", text: r.ci95 === null ? "" : "± " + Math.round(r.ci95) }),
        el("td", { class: "barcol" }, bar),
        el("td", { class: "num", "data-key": "los_next", text: pct(r.los_next) }),
        el("td", { class: "num", "data-key": "games", text: r.games }),
        el("td", { class: "num", "data-key": "score", text: pct(r.score, 1) }),
        el("td", { class: "num", "data-key": "wins", text: r.wins }),
        el("td", { class: "num", "data-key": "draws", text: r.draws }),
        el("td", { class: "num", "data-key": "losses", text: r.losses }),
        el("td", { class: "num", "data-key": "faults" }, faults ? el("a", { href: "games.html#bot=" + encodeURIComponent(r.bot) + "&fault=any", class: "fault-count", text: faults }) : ""),
        el("td", { class: "note", "data-key": "note", text: r.note || "" }));
    });
    return scroll(el("table", { id: "standings", class: "data standings", "aria-label": "Standings" },
      el("thead", null, head), el("tbody", null, body)));
  }

  function heat(score) {
    // red (0%) through neutral (50%) to green (100%)
    const x = Math.max(0, Math.min(1, score));
    const hue = 10 + 120 * x, light = 96 - 38 * Math.abs(x - 0.5) * 2;
    return "hsl(" + hue + " 62% " + light + "%)";
  }

  function headToHead(t) {
    const bots = t.h2h.bots;
    if (bots.length > 60) return el("p", { text: bots.length + " bots: too many for a matrix; each bot's page lists its scores." });
    const head = el("tr", null, el("th", { scope: "col", text: "" }),
      bots.map((b, k) => el("th", { scope: "col", class: "num", title: b }, el("abbr", { title: b, text: String(k + 1) }))));
    const body = bots.map((b, i) => el("tr", null,
      el("th", { scope: "row" }, el("span", { class: "rank", text: (i + 1) + " " }), botLink(t, b)),
      t.h2h.cells[i].map((cell, j) => {
        if (i === j) return el("td", { class: "diag", "aria-label": "same bot" });
        if (!cell) return el("td", { class: "none", text: "", title: "never met" });
        const label = b + " scored " + pct(cell[0]) + " against " + bots[j] + " in " + cell[1] + " pairings";
        return el("td", { class: "heat num", style: { background: heat(cell[0]) }, title: label },
          el("a", { href: "games.html#bot=" + encodeURIComponent(b) + "&opponent=" + encodeURIComponent(bots[j]), "aria-label": label, text: pct(cell[0]) }));
      })));
    return el("div", null,
      el("p", { class: "help", text: "Score of the row's bot against the column's; a cell opens their games." }),
      scroll(el("table", { class: "data heatmap", "aria-label": "Head-to-head scores" }, el("thead", null, head), el("tbody", null, body))));
  }

  function faultTable(t) {
    const kinds = t.fault_kinds;
    const bots = t.h2h.bots.filter((b) => t.faults[b]);
    if (!bots.length) return el("p", { class: "good", text: "No faults: every bot answered every request in time and by the rules." });
    const head = el("tr", null, el("th", { scope: "col", text: "bot" }), kinds.map((k) => el("th", { scope: "col", class: "num", text: k })));
    const body = bots.map((b) => el("tr", null, el("th", { scope: "row" }, botLink(t, b)),
      kinds.map((k) => {
        const n = t.faults[b][k] || 0;
        return el("td", { class: "num" }, n ? el("a", { href: "games.html#bot=" + encodeURIComponent(b) + "&fault=" + k, text: n, "aria-label": n + " " + k + " faults of " + b }) : "");
      })));
    return el("div", null,
      el("p", { class: "help", text: "Games in which each bot forfeited, by kind; a count opens those games, a bot's page shows the offending lines." }),
      scroll(el("table", { class: "data narrow", "aria-label": "Faults by kind and bot" }, el("thead", null, head), el("tbody", null, body))));
  }

  function timeScale(limit) {
    // log scale from 0.01 ms to the limit (or a little past the max)
    const lo = Math.log10(0.01), hi = Math.log10(limit);
    return (x) => Math.max(0, Math.min(100, (100 * (Math.log10(Math.max(x, 0.01)) - lo)) / (hi - lo)));
  }

  function timesTable(t) {
    const limit = t.meta.limits.decision_ms;
    const bots = t.h2h.bots.filter((b) => t.times[b]);
    if (!bots.length) return el("p", { text: "No decision times recorded." });
    const top = Math.max(limit, ...bots.map((b) => t.times[b].max || 0));
    const at = timeScale(top);
    const head = el("tr", null, el("th", { scope: "col", text: "bot" }), el("th", { scope: "col", class: "num", text: "decisions" }),
      el("th", { scope: "col", class: "num", text: "median" }), el("th", { scope: "col", class: "num", text: "99th pct" }),
      el("th", { scope: "col", class: "num", text: "max" }),
      el("th", { scope: "col", class: "barcol wide" }, "against the " + ms(limit) + " limit (log scale)"));
    const body = bots.map((b) => {
      const s = t.times[b];
      const p99 = s.p99 === null ? null : s.p99;
      const bar = el("div", { class: "timebar", role: "img", "aria-label": "median " + ms(s.median) + ", 99th percentile " + ms(p99) + ", max " + ms(s.max) + ", limit " + ms(limit) },
        el("span", { class: "range", style: { left: at(s.median || 0.01) + "%", width: Math.max(0.5, at(s.max || 0.01) - at(s.median || 0.01)) + "%" } }),
        p99 !== null ? el("span", { class: "p99", style: { left: at(p99) + "%" } }) : null,
        el("span", { class: "median", style: { left: at(s.median || 0.01) + "%" } }),
        el("span", { class: "limit", style: { left: at(limit) + "%" } }));
      return el("tr", null, el("th", { scope: "row" }, botLink(t, b)), el("td", { class: "num", text: s.n }),
        el("td", { class: "num", text: ms(s.median) }), el("td", { class: "num", text: p99 === null ? "—" : ms(p99) }),
        el("td", { class: "num" + (s.max > limit ? " over" : ""), text: ms(s.max) }), el("td", { class: "barcol wide" }, bar));
    });
    const old = bots.some((b) => t.times[b].p99 === null);
    return el("div", null,
      el("p", { class: "help", text: "Each bot's answer times on the referee's clock. Bar: median to max; the tick is the 99th percentile, the red line the limit per decision (" + ms(limit) + ", plus a bank of " + ms(t.meta.limits.bank_ms) + ")." +
        (old ? " Some games were played before arena kept time histograms: their bots have no 99th percentile, and the median is the median of the games' medians." : "") }),
      scroll(el("table", { class: "data", "aria-label": "Decision times" }, el("thead", null, head), el("tbody", null, body))));
  }

  function breakdownTable(t) {
    const groups = t.breakdown;
    const head = el("tr", null, el("th", { scope: "col", text: "bot" }),
      groups.map((g) => el("th", { scope: "col", class: "num", text: g.variant + ", " + g.players + " players (" + g.games + ")" })));
    const body = t.h2h.bots.map((b) => el("tr", null, el("th", { scope: "row" }, botLink(t, b)),
      groups.map((g) => { const s = g.bots[b]; return el("td", { class: "num", text: s ? pct(s.score, 1) + " of " + s.games : "" }); })));
    return scroll(el("table", { class: "data", "aria-label": "Score by variant and table size" }, el("thead", null, head), el("tbody", null, body)));
  }

  function settings(t) {
    const m = t.meta, o = m.options, l = m.limits, r = m.resources || {};
    const s = (x) => (x / 1000).toLocaleString("en") + " s";
    const rows = [
      ["command", el("code", { text: m.command })],
      ["seed", String(m.seed)],
      ["games", o.games + " per " + (o.players === 2 ? "pair" : "table") + (o.gauntlet ? ", gauntlet of " + o.gauntlet : ", round robin")],
      ["table", o.players + " players, " + o.variant + " variant, " + (o.plain_deal ? "plain deal" : o.players === 2 ? "draft setup" : "plain deal") + ", turn limit " + o.turn_limit],
      ["time limits", "start-up " + s(l.startup_ms) + ", decision " + s(l.decision_ms) + ", bank " + s(l.bank_ms) + ", game " + s(l.game_ms)],
      ["resources", "memory " + (r.memory_mb || "no limit") + " MB, CPU " + (r.cpu_seconds || "no limit") + " s a game, file size " + r.file_size_mb + " MB, open files " + r.open_files + (r.sandbox ? ", sandboxed" : ", no sandbox")],
      ["arena", "version " + m.arena],
      ["started", m.started || "—"],
      ["finished", m.running ? "not yet: the games are being played (this page is refreshed every 30 s or so)"
        : m.finished || (m.started ? "not yet (interrupted)" : "—")],
      ["site written", t.generated],
    ];
    const bots = el("table", { class: "data compact", "aria-label": "Bots" },
      el("thead", null, el("tr", null, el("th", { scope: "col", text: "bot" }), el("th", { scope: "col", text: "command" }), el("th", { scope: "col", text: "files (sha256)" }))),
      el("tbody", null, m.bots.map((b) => el("tr", null, el("th", { scope: "row" }, botLink(t, b.name)), el("td", null, el("code", { text: b.command })), el("td", null, el("code", { class: "hash", title: b.hash, text: (b.hash || "").slice(0, 12) }))))));
    return el("div", null,
      el("dl", { class: "settings" }, rows.map(([k, v]) => [el("dt", { text: k }), el("dd", null, v)])),
      scroll(bots));
  }

  // ================================================================ game list

  async function allRows(t, onProgress) {
    const rows = [];
    for (let k = 0; k < t.chunks; k++) {
      const c = await chunk(k);
      for (const r of c.rows) rows.push(r);
      if (onProgress) onProgress(rows, k + 1 === t.chunks);
    }
    return rows;
  }

  // Row: [id, line, seats, places, turns, end, faults, variant, duration]
  function resultOf(row, seat) {
    const places = row[3];
    if (!places) return "none";
    const mine = places[seat];
    if (mine !== 1) return "loss";
    return places.filter((p) => p === 1).length > 1 ? "draw" : "win";
  }

  // Rows name bots by their index in t.roster.
  function matches(t, row, f) {
    const seats = row[2];
    const bot = f.bot ? t.roster.indexOf(f.bot) : -1;
    const seat = bot >= 0 ? seats.indexOf(bot) : -1;
    if (f.bot && seat < 0) return false;
    if (f.opponent) {
      const o = t.roster.indexOf(f.opponent);
      if (o < 0 || seats.indexOf(o) < 0 || o === bot) return false;
    }
    if (f.result) {
      if (seat >= 0) { if (resultOf(row, seat) !== f.result) return false; }
      else if (f.result === "none" ? row[3] !== null : !row[3] || !seats.some((_, s) => resultOf(row, s) === f.result)) return false;
    }
    if (f.fault) {
      const faults = row[6];
      if (!faults) return false;
      const has = (k) => k !== null && (f.fault === "any" || k === f.fault);
      if (seat >= 0 ? !has(faults[seat]) : !faults.some(has)) return false;
    }
    if (f.variant && t.variants[row[7]] !== f.variant) return false;
    if (f.size && seats.length !== Number(f.size)) return false;
    return true;
  }

  const SORTS = {
    game: (r) => r[1], turns: (r) => r[4] === null ? -1 : r[4], duration: (r) => r[8] === null ? -1 : r[8],
    players: (r) => r[2].length,
  };

  function gameList(t, options) {
    // options.fixed: filters that cannot change (a bot's page); options.hash: keep state in the URL
    const fixed = options.fixed || {};
    const PAGE = options.page || 50;
    const state = Object.assign({ bot: "", opponent: "", result: "", fault: "", variant: "", size: "", sort: "game", page: "1" }, options.hash ? params() : {}, fixed);
    const root = el("div", { class: "gamelist" });
    const status = el("p", { class: "status", role: "status", "aria-live": "polite" });
    const table = el("table", { class: "data games", id: options.id || "games", "aria-label": "Games" });
    const pager = el("nav", { class: "pager", "aria-label": "Pages of games" });
    let rows = [];
    let complete = false;

    function select(name, label, choices, disabled) {
      const s = el("select", { id: "f-" + name + (options.id || ""), name: name, disabled: disabled },
        choices.map(([v, text]) => el("option", { value: v, text: text, selected: state[name] === v })));
      s.addEventListener("change", () => { state[name] = s.value; state.page = "1"; update(true); });
      return el("label", { class: "filter" }, el("span", { text: label }), s);
    }
    const bots = t.h2h.bots.map((b) => [b, b]);
    const filters = el("form", { class: "filters", "aria-label": "Filter games", onsubmit: (e) => e.preventDefault() },
      fixed.bot ? null : select("bot", "bot", [["", "any bot"], ...bots]),
      select("opponent", fixed.bot ? "against" : "with", [["", "anyone"], ...bots.filter(([b]) => b !== fixed.bot)]),
      select("result", "result" + (fixed.bot ? "" : " (of the bot)"), [["", "any"], ["win", "won"], ["draw", "shared first"], ["loss", "lost"], ["none", "no result"]]),
      select("fault", "fault", [["", "any or none"], ["any", "any fault"], ...t.fault_kinds.map((k) => [k, k])]),
      t.variants.length > 1 ? select("variant", "variant", [["", "any"], ...t.variants.map((v) => [v, v])]) : null,
      t.sizes.length > 1 ? select("size", "table size", [["", "any"], ...t.sizes.map((n) => [String(n), n + " players"])]) : null);

    function header() {
      const col = (key, label, num, extra) => {
        const cls = (num ? "num " : "") + (extra || "");
        if (!SORTS[key]) return el("th", { scope: "col", class: cls, text: label });
        const desc = state.sort === "-" + key, asc = state.sort === key;
        const b = el("button", { type: "button", class: "sort", "data-sort": key },
          label, el("span", { "aria-hidden": "true", class: "arrow", text: asc ? " ▲" : desc ? " ▼" : " ↕" }));
        b.addEventListener("click", () => { state.sort = asc ? "-" + key : key; state.page = "1"; update(true); });
        return el("th", { scope: "col", class: cls, "aria-sort": asc ? "ascending" : desc ? "descending" : "none" }, b);
      };
      return el("thead", null, el("tr", null, col("game", "game", false), el("th", { scope: "col", text: "seats, in place order" }),
        col("turns", "turns", true), el("th", { scope: "col", text: "end" }), el("th", { scope: "col", text: "faults" }),
        t.variants.length > 1 ? el("th", { scope: "col", text: "variant" }) : null,
        col("duration", "time", true, "opt")));
    }

    function rowNode(r) {
      const [id, line, seats, places, turns, end, faults, variant, duration] = r;
      const order = seats.map((b, s) => s).sort((a, b) => (places ? places[a] - places[b] : 0) || a - b);
      const focus = state.bot ? t.roster.indexOf(state.bot) : -1;
      const who = el("ol", { class: "seats" }, order.map((s) => {
        const name = t.roster[seats[s]];
        const place = places ? places[s] : null;
        return el("li", { class: (place === 1 ? "first " : "") + (seats[s] === focus ? "focus" : "") },
          el("span", { class: "place", text: place ? PLACE(place) : "–" }), " ", name);
      }));
      const fl = faults ? faults.map((k, s) => k === null ? null : el("span", { class: "badge fault", text: k + ": " + t.roster[seats[s]] })) : null;
      const endText = typeof end === "number" ? END_WORDS[END_CODES[end]] : (end || "");
      return el("tr", { "data-game": id, "data-line": line },
        el("th", { scope: "row" }, gameLink(id, id || "line " + line)),
        el("td", null, who), el("td", { class: "num", text: turns === null ? "" : turns }),
        el("td", { text: endText }), el("td", null, fl),
        t.variants.length > 1 ? el("td", { text: t.variants[variant] }) : null,
        el("td", { class: "num opt", text: duration === null ? "" : duration.toFixed(2) + " s" }));
    }

    function update(push) {
      if (options.hash) {
        const keep = {};
        for (const k in state) if (!(k in fixed) && !(k === "sort" && state.sort === "game") && !(k === "page" && state.page === "1")) keep[k] = state[k];
        setParams(keep, push);
      }
      const found = rows.filter((r) => matches(t, r, state));
      const key = state.sort.replace(/^-/, "");
      const sign = state.sort.startsWith("-") ? -1 : 1;
      if (SORTS[key]) {
        const f = SORTS[key];
        found.sort((a, b) => sign * (f(a) - f(b)) || a[1] - b[1]);
      }
      const pages = Math.max(1, Math.ceil(found.length / PAGE));
      const page = Math.min(pages, Math.max(1, Number(state.page) || 1));
      const shown = found.slice((page - 1) * PAGE, page * PAGE);
      table.replaceChildren(header(), el("tbody", null, shown.map(rowNode)));
      status.textContent = (complete ? "" : "Loading games… ") + found.length + " of " + rows.length + " games" +
        (complete ? "" : " read so far") + (found.length ? ", " + ((page - 1) * PAGE + 1) + "–" + ((page - 1) * PAGE + shown.length) + " shown" : "");
      const go = (p, label, text) => {
        const b = el("button", { type: "button", disabled: p < 1 || p > pages || p === page, "aria-label": label, text: text });
        b.addEventListener("click", () => { state.page = String(p); update(true); table.scrollIntoView({ block: "start" }); });
        return b;
      };
      pager.replaceChildren(go(1, "first page", "«"), go(page - 1, "previous page", "‹ prev"),
        el("span", { text: "page " + page + " of " + pages }), go(page + 1, "next page", "next ›"), go(pages, "last page", "»"));
    }

    if (options.hash) {
      window.addEventListener("hashchange", () => {
        Object.assign(state, { bot: "", opponent: "", result: "", fault: "", variant: "", size: "", sort: "game", page: "1" }, params(), fixed);
        filters.querySelectorAll("select").forEach((s) => { s.value = state[s.name]; });
        update(false);
      });
    }
    root.append(filters, status, scroll(table), pager);
    // The first chunk shows the first page at once; the rest fill in (and re-sort) as they come.
    let chunksRead = 0;
    allRows(t, (sofar, done) => { rows = sofar; complete = done; chunksRead++; if (done || chunksRead === 1 || chunksRead % 5 === 0) update(false); })
      .then(() => { complete = true; update(false); root.setAttribute("data-ready", "1"); })
      .catch((e) => { status.textContent = String(e.message); });
    update(false);
    return root;
  }

  async function gamesPage() {
    const t = await tournament();
    setTitle(t, "Games");
    show(el("h1", { text: "Games" }),
      el("p", { class: "lead", text: t.games + " games. Open one to watch it step by step." }),
      gameList(t, { hash: true }));
  }

  // ================================================================ bot page
  async function botPage() {
    const t = await tournament();
    const name = params().bot;
    if (!name || !(name in t.bot_files)) {
      setTitle(t, "Bots");
      show(el("h1", { text: "Bots" }), el("ul", { class: "botlist" }, t.h2h.bots.map((b) => el("li", null, botLink(t, b)))));
      return;
    }
    const key = t.bot_files[name];
    const b = await load("bot-" + key, "data/bot-" + key + ".js");
    setTitle(t, name);
    const r = b.rating;
    const rank = t.h2h.bots.indexOf(name) + 1;
    const stats = el("dl", { class: "stats" },
      [["rank", rank + " of " + t.h2h.bots.length],
       ["Elo", r && r.elo !== null ? Math.round(r.elo) + (r.ci95 !== null ? " ± " + Math.round(r.ci95) : "") : "—"],
       ["score", r && r.score !== null ? pct(r.score, 1) : "—"],
       ["W / D / L", r ? r.wins + " / " + r.draws + " / " + r.losses : "—"],
       ["faults", String(b.faults_total)],
       ["decision median", b.times ? ms(b.times.median) : "—"],
       ["99th pct / max", b.times ? ms(b.times.p99) + " / " + ms(b.times.max) : "—"]]
        .map(([k, v]) => el("div", null, el("dt", { text: k }), el("dd", { text: v }))));
    const opp = el("table", { class: "data", "aria-label": "Score against each opponent" },
      el("thead", null, el("tr", null, ["opponent", "games", "W", "D", "L", "score"].map((h, i) => el("th", { scope: "col", class: i ? "num" : "", text: h })), el("th", { scope: "col", class: "barcol" }, el("span", { class: "sr", text: "bar" })))),
      el("tbody", null, b.opponents.map((o) => el("tr", null,
        el("th", { scope: "row" }, botLink(t, o.bot)), el("td", { class: "num" }, el("a", { href: "games.html#bot=" + encodeURIComponent(name) + "&opponent=" + encodeURIComponent(o.bot), text: o.games })),
        el("td", { class: "num", text: o.wins }), el("td", { class: "num", text: o.draws }), el("td", { class: "num", text: o.losses }),
        el("td", { class: "num", text: pct(o.score, 1) }),
        el("td", { class: "barcol" }, el("div", { class: "scorebar", role: "img", "aria-label": pct(o.score, 1) }, el("span", { style: { width: pct(o.score, 1), background: heat(o.score || 0) } })))))));
    let faults;
    if (!b.faults.length) faults = el("p", { class: "good", text: "No faults." });
    else {
      faults = el("div", null,
        b.faults_total > b.faults.length ? el("p", { class: "help", text: "The latest " + b.faults.length + " of " + b.faults_total + " faults." }) : null,
        el("ol", { class: "faults" }, b.faults.map((f) => el("li", { class: "fault-item" },
          el("div", { class: "fault-head" }, el("span", { class: "badge fault", text: f.kind }), " ",
            gameLink(f.game, f.game ? "game " + f.game : "line " + f.line, "&fault=" + encodeURIComponent(name)),
            f.elapsed !== undefined ? el("span", { class: "muted", text: " after " + ms(1000 * f.elapsed) }) : null),
          el("p", { text: f.detail || "" }),
          f.line !== undefined ? el("div", { class: "evidence" }, el("span", { class: "label", text: "its line" }), el("code", { class: "line", text: f.line })) : null,
          f.request !== undefined ? el("div", { class: "evidence" }, el("span", { class: "label", text: "answering" }), el("code", { text: f.request })) : null,
          f.exit !== undefined ? el("div", { class: "evidence" }, el("span", { class: "label", text: "exit" }), el("code", { text: f.exit })) : null))));
    }
    const logs = b.logs.length ? b.logs.map((l) => el("figure", { class: "log" },
      el("figcaption", null, el("code", { text: l.file }), l.cut ? " (last lines of " + l.size.toLocaleString("en") + " bytes)" : ""),
      el("pre", { tabindex: "0" }, logLines(l.text)))) : el("p", { text: "No log." });
    show(el("h1", null, el("span", { class: "muted", text: "bot " }), name),
      stats,
      section("Against each opponent", "opp", scroll(opp)),
      section("Faults", "bot-faults", faults),
      section("Its log (stderr)", "log", logs),
      section("Its games", "bot-games", gameList(t, { fixed: { bot: name }, hash: false, id: "bot-games-table", page: 20 })));
    // A log's tail is read from its end: the latest lines show first.
    main().querySelectorAll(".log pre").forEach((pre) => { pre.scrollTop = pre.scrollHeight; });
  }

  // A log as text; the referee's "== game N, record R ==" marks link to the game.
  function logLines(text) {
    if (!text) return "(empty)";
    return text.split("\n").map((line, i) => {
      const mark = /^== game \d+, record records\/(\d+)\.json\.gz ==$/.exec(line);
      return [i ? "\n" : "", mark ? gameLink(mark[1], line) : line];
    });
  }

  // ================================================================ replay
  const EVENT_TEXT = {
    GS: (e, w) => ["A game of " + e[1] + " (" + e[2] + ", " + (e[3] ? "draft setup" : "plain deal") + "); ", w(e[4]), " goes first; the Court holds " + e[6] + " cards"],
    DL: (e, w) => [w(e[1]), " is dealt ", cards(e[2], "its cards, face down")],
    DO: (e, w) => [w(e[1]), " drafts from ", cards(e[2], "a pile of 5")],
    DC: (e, w) => [w(e[1]), " drafts ", cards(e[2], "a face-down card")],
    TS: (e, w) => ["Turn " + e[1] + ": ", w(e[2])],
    AD: (e, w) => [w(e[1]), " declares ", el("strong", { text: e[2].replace("_", " ") }), e[3] !== null ? [" on ", w(e[3])] : "", e[4] ? [" claiming ", cards(e[4])] : ""],
    CC: (e, w) => [e[4] === "refund" ? [el("span", { class: "tag refund", text: "refund" }), " "] : "",
      w(e[1]), " " + (e[2] >= 0 ? "+" : "−") + Math.abs(e[2]) + " coins (" + e[4].replace("_", " ") + ") → " + e[3]],
    CH: (e, w) => [w(e[1]), " challenges ", w(e[2]), "’s ", cards(e[3])],
    CP: (e, w) => [el("span", { class: "tag proof", text: "proof" }), " ", w(e[1]), " shows ", cards(e[2]), " and shuffles it into the Court"],
    CF: (e, w) => [el("span", { class: "tag bluff", text: "bluff" }), " ", w(e[1]), " did not have ", cards(e[2])],
    DR: (e, w) => [w(e[1]), " draws ", cards(e[2], "a face-down card"), " from the Court"],
    BL: (e, w) => [w(e[1]), " blocks ", w(e[3]), " claiming ", cards(e[2])],
    IL: (e, w) => [w(e[1]), " loses an influence: ", cards(e[2]), " turned face up"],
    PO: (e, w) => [el("span", { class: "tag out", text: "out" }), " ", w(e[1]), " is out (" + e[2] + ")"],
    FF: (e, w) => [el("span", { class: "tag fault", text: "fault" }), " ", w(e[1]), " forfeits: " + e[2]],
    XD: (e, w) => [w(e[1]), " draws ", cards(e[3], e[2] + " face-down cards"), " from the Court"],
    XR: (e, w) => [w(e[1]), " returns ", cards(e[3], e[2] + " face-down cards"), " to the Court"],
    ES: (e, w) => [w(e[2]), " shows ", cards(e[3], "a card"), " to ", w(e[1])],
    ED: (e, w) => [w(e[1]), e[3] ? " makes " : " lets ", w(e[2]), e[3] ? " swap the card" : " keep the card"],
    AR: (e, w) => [w(e[1]), "’s ", el("strong", { text: e[2].replace("_", " ") }), e[3] !== null ? [" on ", w(e[3])] : "", " takes effect"],
    AF: (e, w) => [w(e[1]), "’s " + e[2].replace("_", " ") + " fails (" + e[3].replace("_", " ") + ")"],
    GO: (e, w) => ["Game over after " + e[2] + " turns (" + (END_WORDS[e[1]] || e[1]) + "): ", e[3].map((p, s) => [s ? ", " : "", PLACE(p) + " ", w(s)])],
  };
  // What the game waits for, by request kind.
  const ASKED = { draft: "drafting", action: "to act", challenge: "may challenge", block: "may block",
    lose: "must lose a card", keep: "chooses cards to keep", show: "shows a card", force: "may force a swap" };
  function cards(letters, hiddenText) {
    if (letters === null || letters === undefined) return el("span", { class: "hiddentext", text: hiddenText || "a face-down card" });
    return el("span", { class: "cardlist" }, cardWords(letters));
  }
  function refundNote(e) { return e[0] === "CC" && e[4] === "refund"; }

  function parseTable(text) {
    const parts = text.split(";");
    return { court: Number(parts[0]), seats: parts.slice(1).map((s) => {
      const f = s.split(".");
      return { coins: Number(f[0]), hand: f[1], revealed: f[2], drawn: f[3], out: f[4] === "x" };
    }) };
  }

  async function replayPage() {
    const t = await tournament();
    let p = params();
    if (!p.game) { show(el("h1", { text: "Replay" }), el("p", null, "Pick a game from the ", el("a", { href: "games.html", text: "game list" }), ".")); return; }
    const id = p.game.replace(/[^0-9]/g, "");
    let g;
    try {
      // replay_pack games a file (arena/site/build.py): game N is in file N / replay_pack.
      const file = pad(Math.floor(Number(id) / t.replay_pack), 5);
      const pack = await load("replays-" + file, "replays/" + file + ".js");
      if (!Object.prototype.hasOwnProperty.call(pack, id)) throw new Error("replays/" + file + ".js holds no game " + id);
      g = pack[id];
    }
    catch (e) {
      setTitle(t, "Replay");
      show(el("h1", { text: "Game " + id }), el("p", { class: "error", role: "alert", text: "No replay here (" + e.message + "): its record may have been deleted." }),
        el("p", null, el("a", { href: "games.html", text: "← all games" })));
      main().setAttribute("data-ready", "1");
      return;
    }
    setTitle(t, "Game " + id);
    if (g.error) { fail(new Error("Game " + id + ": its record does not replay: " + g.error)); return; }
    const n = g.names.length;
    const steps = g.steps;
    // Every view's tables, with the empty "unchanged" entries filled in.
    const tables = g.tables.map((list) => { let last = null; return list.map((s) => (last = s === "" ? last : parseTable(s))); });
    let view = "all", step = 0, timer = null;

    function viewIndex() { return view === "all" ? 0 : 1 + Number(view); }
    function eventsOf(v) {
      if (v === "all") return g.events;
      const seen = g.seen[Number(v)];
      return g.events.map((e, i) => seen[i] || e);
    }
    function who(s) {
      return el("span", { class: "who s" + (s % 8), title: "seat " + s }, g.names[s]);
    }
    function stepStart(k) { return k ? steps[k - 1][0] : 0; }

    const title = el("h1", null, el("span", { class: "muted", text: "game " }), id);
    const facts = el("p", { class: "lead" });
    const placesOrder = g.result ? g.result.placements.map((pl, s) => [pl, s]).sort((a, b) => a[0] - b[0] || a[1] - b[1]) : [];
    facts.append(g.variant + ", " + n + " players, " + (g.result ? g.result.turns + " turns, " + (END_WORDS[g.result.reason] || g.result.reason) : "no result") + ". ",
      ...placesOrder.map(([pl, s], i) => [i ? ", " : "", PLACE(pl) + " ", botLink(t, g.names[s])]).flat(), ".");
    const faultNotes = g.faults.map((f, s) => f ? el("li", { class: "fault-item" }, el("span", { class: "badge fault", text: f.kind }), " ", botLink(t, g.names[s]), ": " + (f.detail || ""),
      f.line !== undefined ? [" ", el("code", { class: "line", text: f.line })] : "") : null).filter(Boolean);

    const viewSelect = el("select", { id: "view", "aria-describedby": "view-help" },
      el("option", { value: "all", text: "Spectator: every card" }),
      g.names.map((name, s) => el("option", { value: String(s), text: "As " + name + " (seat " + s + ") saw it" })));
    viewSelect.addEventListener("change", () => { view = viewSelect.value; render(true); });
    const slider = el("input", { type: "range", id: "step", min: "0", max: String(steps.length - 1), value: "0", "aria-label": "step" });
    slider.addEventListener("input", () => { step = Number(slider.value); render(true); });
    const btn = (label, text, f, key) => el("button", { type: "button", "aria-label": label, title: label + (key ? " (" + key + ")" : ""), text: text, onclick: f });
    const playBtn = btn("play", "▶ play", () => toggle(), "space");
    const controls = el("div", { class: "controls", role: "toolbar", "aria-label": "Replay controls" },
      btn("first step", "«", () => go(0), "Home"), btn("previous step", "◀ back", () => go(step - 1), "←"),
      playBtn, btn("next step", "next ▶", () => go(step + 1), "→"), btn("last step", "»", () => go(steps.length - 1), "End"));
    const where = el("p", { class: "where", id: "where", "aria-live": "polite" });
    const now = el("p", { class: "waiting", id: "waiting", "aria-live": "polite" });
    const tableNode = el("div", { class: "table-area", id: "table", "aria-label": "The table" });
    const turnLog = el("ol", { class: "turnlog", id: "turnlog", "aria-label": "The turn so far" });

    show(title, facts,
      faultNotes.length ? el("ul", { class: "faults-inline" }, faultNotes) : null,
      el("div", { class: "viewer" },
        el("div", { class: "bar" },
          el("label", { class: "filter", for: "view" }, el("span", { text: "view" }), viewSelect),
          controls),
        el("div", { class: "scrub" }, slider, where),
        el("p", { class: "help", id: "view-help", text: "Keys: ← → step, space plays, Home/End. A seat's view shows exactly what the referee sent that seat." }),
        el("div", { class: "stage" }, tableNode, el("section", { class: "log-area", "aria-labelledby": "turn-h" }, el("h2", { id: "turn-h", text: "The turn so far" }), turnLog, now))));

    function go(k) { step = Math.max(0, Math.min(steps.length - 1, k)); render(true); }
    function toggle() {
      if (timer) { clearInterval(timer); timer = null; playBtn.textContent = "▶ play"; playBtn.setAttribute("aria-label", "play"); return; }
      if (step >= steps.length - 1) step = 0;
      playBtn.textContent = "❚❚ pause"; playBtn.setAttribute("aria-label", "pause");
      timer = setInterval(() => { if (step >= steps.length - 1) toggle(); else go(step + 1); }, 700);
      render(true);
    }

    function render(updateHash) {
      slider.value = String(step);
      viewSelect.value = view;
      const [end, turn, current, waiting] = steps[step];
      const asked = waiting ? waiting[1] : [];
      const tb = tables[viewIndex()][step];
      const events = eventsOf(view);
      // the table
      const seats = tb.seats.map((s, k) => {
        const mine = view !== "all" && Number(view) === k;
        return el("article", { class: "seat s" + (k % 8) + (s.out ? " out" : "") + (k === current ? " current" : "") + (mine ? " mine" : ""),
          "data-seat": k, "data-coins": s.coins, "aria-label": g.names[k] + ", seat " + k + (s.out ? ", out" : "") },
          el("header", null, el("span", { class: "name", text: g.names[k] }), el("span", { class: "seatno", text: "seat " + k + (mine ? " · you" : "") }),
            s.out ? el("span", { class: "tag out", text: "out" }) : null,
            asked.includes(k) ? el("span", { class: "tag asked", text: ASKED[waiting[0]] || waiting[0] })
              : k === current && !s.out ? el("span", { class: "tag turn", text: "its turn" }) : null),
          el("div", { class: "coins", title: s.coins + " coins" }, el("span", { class: "coin", "aria-hidden": "true" }), el("span", { class: "n", text: s.coins }), " coins"),
          el("div", { class: "hand", "aria-label": "face-down cards" }, s.hand.split("").map((c) => cardChip(c, "down")), s.hand ? null : el("span", { class: "muted", text: "no cards" })),
          s.revealed ? el("div", { class: "revealed", "aria-label": "face-up cards (lost)" }, s.revealed.split("").map((c) => cardChip(c, "up"))) : null,
          s.drawn ? el("div", { class: "drawn", "aria-label": "drawn by the Exchange" }, el("span", { class: "label", text: "drawn" }), s.drawn.split("").map((c) => cardChip(c, "down"))) : null);
      });
      tableNode.replaceChildren(el("div", { class: "court", "data-court": tb.court }, el("span", { class: "deck", "aria-hidden": "true" }), "Court: " + tb.court + " cards"), el("div", { class: "seats-grid" }, seats));
      // this turn's events up to the end of this step
      // from the start of the turn this step began in (a step may end one turn and start the next)
      const from = stepStart(step);
      let first = 0;
      for (let i = Math.min(from, end - 1); i >= 0; i--) if (events[i][0] === "TS") { first = i; break; }
      const items = [];
      for (let i = first; i < end; i++) {
        const e = events[i];
        const text = (EVENT_TEXT[e[0]] || ((x) => [JSON.stringify(x)]))(e, who);
        items.push(el("li", { class: "ev ev-" + e[0] + (i >= from ? " now" : "") + (refundNote(e) ? " refund" : ""), "data-event": i }, text));
      }
      turnLog.replaceChildren(...items);
      where.textContent = "Step " + step + " of " + (steps.length - 1) + (turn ? " · turn " + turn : " · the deal");
      now.replaceChildren(...(waiting ? ["Waiting for ", ...asked.map((s, i) => [i ? (i < asked.length - 1 ? ", " : waiting[0] === "draft" ? " and " : " or ") : "", who(s)]).flat(), " (" + (ASKED[waiting[0]] || waiting[0]) + ")"]
        : ["Game over."]));
      if (updateHash) setParams({ game: id, step: String(step), view: view === "all" ? "" : view });
    }

    function fromHash() {
      p = params();
      if (p.game !== undefined && p.game.replace(/[^0-9]/g, "") !== id) { location.reload(); return; }
      view = p.view !== undefined && p.view !== "" && Number(p.view) < n ? String(Number(p.view)) : "all";
      if (p.fault) {
        // a fault link: the step where that bot forfeits
        const seat = g.names.indexOf(p.fault);
        const at = g.events.findIndex((e) => e[0] === "FF" && e[1] === seat);
        step = at < 0 ? steps.length - 1 : steps.findIndex((s) => s[0] > at);
      } else {
        step = Math.max(0, Math.min(steps.length - 1, Number(p.step) || 0));
      }
      render(false);
    }
    window.addEventListener("hashchange", fromHash);
    document.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const tag = (e.target && e.target.tagName) || "";
      if (tag === "SELECT" || tag === "TEXTAREA" || (tag === "INPUT" && e.target !== slider)) return;
      if (e.target === slider && (e.key === "ArrowLeft" || e.key === "ArrowRight")) return; // the slider steps itself
      if (e.key === "ArrowRight") { go(step + 1); e.preventDefault(); }
      else if (e.key === "ArrowLeft") { go(step - 1); e.preventDefault(); }
      else if (e.key === "Home") { go(0); e.preventDefault(); }
      else if (e.key === "End") { go(steps.length - 1); e.preventDefault(); }
      else if (e.key === " " && tag !== "BUTTON") { toggle(); e.preventDefault(); }
    });
    fromHash();
    main().setAttribute("data-ready", "1");
  }

  // ---------------------------------------------------------------- start
  const pages = { index: indexPage, games: gamesPage, bot: botPage, replay: replayPage };
  function start() {
    const page = pages[document.body.getAttribute("data-page")];
    if (document.body.getAttribute("data-page") === "index" && params().game) {
      location.replace("replay.html" + location.hash);  // a deep link given to the index
      return;
    }
    page().then(() => { if (!main().hasAttribute("data-ready")) main().setAttribute("data-ready", "1"); }, fail);
  }
  if (document.body.getAttribute("data-page") === "bot") window.addEventListener("hashchange", () => { main().removeAttribute("data-ready"); start(); });
  start();
})();
