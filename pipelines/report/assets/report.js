/* pitaudit report: sortable tables and the full findings table, offline (no library, no network).
   Every value from the data is written with textContent, never as HTML. */
(function () {
  "use strict";

  // ---- the other tables: click a header to sort by it (a numeric cell, class "n", by the number it shows) ----
  function numberOf(td) {
    var v = parseFloat(td.textContent.replace(/[,+]/g, ""));
    return isNaN(v) ? null : v;
  }
  function sortStatic(table, col, th) {
    var body = table.tBodies[0];
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col];
      if (x.classList.contains("n") || y.classList.contains("n")) {
        var xv = numberOf(x), yv = numberOf(y);
        if (xv === null) return yv === null ? 0 : 1;
        if (yv === null) return -1;
        return dir * (xv - yv);
      }
      var xt = x.textContent, yt = y.textContent;
      return dir * (xt < yt ? -1 : xt > yt ? 1 : 0);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    if (!table.tHead) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.title = "sort";
      th.addEventListener("click", function () { sortStatic(table, i, th); });
    });
  });

  // ---- the full findings table: its data is gzipped JSON in base64 (pipelines/report/payload.py) ----
  var dataEl = document.getElementById("findings-data");
  if (!dataEl) return;
  if (dataEl.getAttribute("data-encoding") !== "gzip+base64") { table(JSON.parse(dataEl.textContent)); return; }
  if (typeof DecompressionStream === "undefined") { document.getElementById("f-unsupported").hidden = false; return; }
  var bin = atob(dataEl.textContent.trim()), bytes = new Uint8Array(bin.length);
  for (var b = 0; b < bin.length; b++) bytes[b] = bin.charCodeAt(b);
  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text()
    .then(function (text) { table(JSON.parse(text)); });

  function table(D) {
  var N = D.n, C = D.cols;
  var PAGE = 100;
  var COLS = [
    ["sev", "severity"], ["kind", "kind"], ["table", "table"], ["round", "round"], ["time", "closed (local)"],
    ["dealer", "dealer"], ["player", "player"], ["cur", "currency"], ["exp", "expected"], ["rec", "recorded"],
    ["diff", "difference"], ["rule", "rule"], ["p", "p"], ["q", "q"], ["ev", "evidence"],
    ["day", "gaming day"]
  ].filter(function (c) { return c[0] === "ev" || c[0] === "src" ? true : !!C[c[0]]; });
  // a finding's detail is a row of its own under its columns, the table's whole width: as the fifteenth column it
  // pushed the table past a 1,400-pixel window, each sentence to be scrolled to
  var MONEY = {exp: 1, rec: 1, diff: 1};
  var NUM = {round: 1, seat: 1, p: 1, q: 1, line: 1};
  // ids from the logs: a cell that may break inside its text (one of hundreds of characters wraps, report.css)
  var IDENT = {table: 1, dealer: 1, player: 1, wager: 1, id: 1};
  var SHORT_ID = 24;  // pipelines/id_cells.py SHORT_ID: an id up to this long keeps to one line

  function raw(k, i) {
    var c = C[k];
    if (!c) return null;
    var v = c.v[i];
    if (c.d) return v < 0 ? null : c.d[v];
    return v;
  }
  // sort keys: dictionary columns by the rank of their (sorted) dictionary, money by value
  function key(k, i) {
    var c = C[k];
    if (k === "src") return raw("file", i) === null ? null : raw("file", i) + "\u0000" + String(1e12 + (raw("line", i) || 0));
    if (!c) return null;
    var v = c.v[i];
    if (c.d) return v < 0 ? null : v;
    if (MONEY[k]) return v === null ? null : Number(v);
    return v;
  }
  function money(s, cur) {
    if (s === null || s === undefined) return "";
    var neg = s.charAt(0) === "-", digits = neg ? s.slice(1) : s;
    var dec = D.decimals[cur];
    var unknown = dec === null || dec === undefined;
    if (unknown) dec = 0;
    while (digits.length <= dec) digits = "0" + digits;
    var whole = digits.slice(0, digits.length - dec), frac = digits.slice(digits.length - dec);
    whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (neg ? "-" : "") + whole + (dec ? "." + frac : "") + (unknown ? " (smallest unit)" : "");
  }
  function shown(k, i) {
    if (MONEY[k]) return money(raw(k, i), raw("cur", i));
    if (k === "src") { var f = raw("file", i); return f === null ? "" : f + ":" + (raw("line", i) === null ? "" : raw("line", i)); }
    var v = raw(k, i);
    if (v === null || v === undefined) return "";
    if (k === "p" && v <= D.p_floor) return "< 1e-12";  // floored, not computed: "1.0e-12" would claim a figure
    if (k === "p" || k === "q") return Number(v).toPrecision(2);
    if (k === "round" || k === "seat" || k === "line") return String(v);  // ids, as `pitaudit evidence --round` takes them
    if (typeof v === "number") return v.toLocaleString("en-US");
    return String(v);
  }

  var state = {sort: null, dir: 1, page: 0, order: null};
  var hay = null;
  function haystack() {
    if (hay) return hay;
    hay = new Array(N);
    var keys = ["kind", "day", "table", "round", "game", "dealer", "player", "wager", "cur", "rule", "detail", "file", "id", "time"];
    for (var i = 0; i < N; i++) {
      var parts = [];
      for (var j = 0; j < keys.length; j++) { var v = raw(keys[j], i); if (v !== null && v !== undefined) parts.push(String(v)); }
      hay[i] = parts.join("\u0001").toLowerCase();
    }
    return hay;
  }

  var el = function (id) { return document.getElementById(id); };
  function fillSelect(sel, k) {
    if (!C[k] || !C[k].d) { sel.style.display = "none"; return; }
    C[k].d.forEach(function (v) { var o = document.createElement("option"); o.value = v; o.textContent = v; sel.appendChild(o); });
  }
  fillSelect(el("f-sev"), "sev"); fillSelect(el("f-kind"), "kind"); fillSelect(el("f-cur"), "cur"); fillSelect(el("f-table"), "table");

  // header
  var head = el("findings-head");
  COLS.forEach(function (c) {
    var th = document.createElement("th");
    th.textContent = c[1];
    th.setAttribute("data-key", c[0]);
    if (c[0] !== "ev") {
      th.title = "sort";
      th.addEventListener("click", function () {
        if (state.sort === c[0]) state.dir = -state.dir; else { state.sort = c[0]; state.dir = 1; }
        state.page = 0; apply();
      });
    }
    head.appendChild(th);
  });

  function compute() {
    var q = el("f-search").value.trim().toLowerCase();
    var want = {sev: el("f-sev").value, kind: el("f-kind").value, cur: el("f-cur").value, table: el("f-table").value};
    var moneyOnly = el("f-money").checked;
    var h = q ? haystack() : null;
    var out = [];
    for (var i = 0; i < N; i++) {
      if (want.sev && raw("sev", i) !== want.sev) continue;
      if (want.kind && raw("kind", i) !== want.kind) continue;
      if (want.cur && raw("cur", i) !== want.cur) continue;
      if (want.table && raw("table", i) !== want.table) continue;
      if (moneyOnly) { var d = raw("diff", i); if (d === null || d === "0") continue; }
      if (h && h[i].indexOf(q) < 0) continue;
      out.push(i);
    }
    if (state.sort) {
      var k = state.sort, dir = state.dir;
      var ks = new Array(N), cur = C.cur ? C.cur.v : null;
      out.forEach(function (i) { ks[i] = key(k, i); });
      out.sort(function (a, b) {
        var x = ks[a], y = ks[b];
        if (x === null || x === undefined) return (y === null || y === undefined) ? a - b : 1;
        if (y === null || y === undefined) return -1;
        // amounts of different currencies are not compared: money sorts by currency, then amount
        if (MONEY[k] && cur && cur[a] !== cur[b]) return cur[a] - cur[b];
        return x < y ? -dir : x > y ? dir : a - b;
      });
    }
    return out;
  }

  // a finding's page: its round's evidence pack when the audit wrote it (D.cols.pack: 1 written, 0 not; absent:
  // the report was built without the packs, the link is where `pitaudit evidence` writes), or the investigation
  // of a statistical finding's subject (D.cols.inv)
  function packWritten(i) {
    var p = raw("pack", i);
    return p === null ? !C.pack : p === 1;
  }
  function evidenceCell(td, i) {
    var inv = raw("inv", i);
    if (inv) {
      var b = document.createElement("a");
      b.href = inv;
      b.textContent = "investigation";
      b.title = "the investigation of this finding's subject over its window";
      b.addEventListener("click", function (e) { e.stopPropagation(); });
      td.appendChild(b);
      return;
    }
    var t = raw("table", i), r = raw("round", i);
    if (t === null || r === null || !D.links[t]) { td.textContent = ""; return; }
    if (!packWritten(i)) {
      td.textContent = "not written";
      td.className = "note";
      td.title = "beyond this night's bound of evidence packs: click the row for the command that makes it";
      return;
    }
    var a = document.createElement("a");
    a.href = D.links[t][0] + r + "/index.html";
    a.textContent = "evidence";
    a.title = "the round's evidence pack";
    a.addEventListener("click", function (e) { e.stopPropagation(); });
    td.appendChild(a);
  }

  // a statistical finding's detail is its sentence, q and window, then the test's JSON document: the row shows the
  // words; the JSON stays in the row's facts (a click), the search and findings.csv
  function readable(s) {
    if (!s) return s;
    var k = s.indexOf('. {"');
    return k < 0 ? s : s.slice(0, k + 1);
  }

  function facts(i) {
    var tr = document.createElement("tr");
    tr.className = "facts";
    var td = document.createElement("td");
    td.colSpan = COLS.length;
    var dl = document.createElement("dl");
    function add(label, value) {
      if (value === null || value === undefined || value === "") return;
      var dt = document.createElement("dt"); dt.textContent = label;
      var dd = document.createElement("dd"); dd.textContent = value;
      dl.appendChild(dt); dl.appendChild(dd);
    }
    add("finding", raw("id", i));
    add("what", raw("detail", i));
    add("rule", raw("rule", i));
    add("round", (raw("table", i) || "") + " #" + (raw("round", i) === null ? "" : raw("round", i)) + ", gaming day " + (raw("day", i) || "") + (raw("time", i) ? ", betting closed " + raw("time", i) + " local time" : ""));
    add("game", raw("game", i));
    add("who", "dealer " + (raw("dealer", i) || "-") + ", player " + (raw("player", i) || "-") + (raw("seat", i) !== null && raw("seat", i) !== undefined ? ", seat " + raw("seat", i) : "") + (raw("wager", i) ? ", wager " + raw("wager", i) : ""));
    if (raw("diff", i) !== null && raw("diff", i) !== undefined) {
      var cur = raw("cur", i) || "";
      add("money", "expected " + money(raw("exp", i), cur) + " " + cur + ", recorded " + money(raw("rec", i), cur) + " " + cur + ", difference " + money(raw("diff", i), cur) + " " + cur);
    }
    add("source", shown("src", i));
    var t = raw("table", i), r = raw("round", i);
    if (raw("inv", i)) add("investigation", raw("inv", i));
    if (t !== null && r !== null && D.links[t]) {
      if (packWritten(i)) add("evidence pack", D.links[t][0] + r + "/index.html");
      add(packWritten(i) ? "to make it again, run in this report's folder" : "no pack written tonight: run in this report's folder",
          D.links[t][1] + r + D.links[t][2] + r);
    }
    td.appendChild(dl);
    tr.appendChild(td);
    return tr;
  }

  // one finding's rows: its columns, then (when it says something) its detail across the table; a click on either
  // opens or closes its facts under them
  function findingRows(i) {
    var tr = document.createElement("tr");
    tr.setAttribute("data-i", String(i));
    COLS.forEach(function (c) {
      var td = document.createElement("td");
      if (c[0] === "ev") evidenceCell(td, i);
      else {
        td.textContent = shown(c[0], i);
        if (MONEY[c[0]] || NUM[c[0]]) td.className = "num";
        if (IDENT[c[0]]) td.className = td.textContent.length <= SHORT_ID ? "ident short" : "ident";
        if (c[0] === "sev") td.className = "sev " + (raw("sev", i) || "");
      }
      tr.appendChild(td);
    });
    var rows = [tr], said = readable(shown("detail", i));
    if (said) {
      tr.className = "finding";
      var more = document.createElement("tr"), td = document.createElement("td");
      more.className = "detail";
      more.setAttribute("data-of", String(i));
      td.className = "detail";
      td.colSpan = COLS.length;
      td.textContent = said;
      more.appendChild(td);
      rows.push(more);
    }
    var last = rows[rows.length - 1];
    rows.forEach(function (row) {
      row.addEventListener("click", function () {
        var next = last.nextSibling;
        if (next && next.className === "facts") { next.parentNode.removeChild(next); return; }
        last.parentNode.insertBefore(facts(i), last.nextSibling);
      });
    });
    return rows;
  }

  function render() {
    var order = state.order, body = el("findings-body");
    var pages = Math.max(1, Math.ceil(order.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    var start = state.page * PAGE, end = Math.min(order.length, start + PAGE);
    var frag = document.createDocumentFragment();
    for (var n = start; n < end; n++) findingRows(order[n]).forEach(function (row) { frag.appendChild(row); });
    body.textContent = "";
    body.appendChild(frag);
    Array.prototype.forEach.call(head.cells, function (th) {
      var k = th.getAttribute("data-key");
      if (k === state.sort) th.setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    });
    el("f-count").textContent = order.length.toLocaleString("en-US") + " of " + N.toLocaleString("en-US") + " findings";
    el("f-page").textContent = order.length ? "rows " + (start + 1).toLocaleString("en-US") + "-" + end.toLocaleString("en-US") + ", page " + (state.page + 1) + " of " + pages : "no finding matches";
    el("f-prev").disabled = state.page === 0;
    el("f-next").disabled = state.page >= pages - 1;
  }

  function apply() { state.order = compute(); render(); }
  var timer = null;
  el("f-search").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(function () { state.page = 0; apply(); }, 150); });
  ["f-sev", "f-kind", "f-cur", "f-table", "f-money"].forEach(function (id) {
    el(id).addEventListener("change", function () { state.page = 0; apply(); });
  });
  el("f-prev").addEventListener("click", function () { state.page -= 1; render(); });
  el("f-next").addEventListener("click", function () { state.page += 1; render(); });
  apply();
  document.getElementById("findings-table").setAttribute("data-ready", "1");
  }
})();
