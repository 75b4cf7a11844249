// tracer's page script: sends small JSON messages over the WebSocket and
// swaps in the HTML fragments the server renders. The server owns the
// session (its runs, position and branches); this script only asks it to
// change, and shows the newest view it sends.
(() => {
  "use strict";
  const body = document.body;
  const stepper = document.getElementById("stepper");
  const errorBox = document.getElementById("error");
  const importForm = document.getElementById("import-form");
  const fileInput = importForm.querySelector("input[type=file]");
  const runPanel = document.getElementById("run-panel");
  const runForm = document.getElementById("run-form");
  const runError = document.getElementById("run-error");
  const branchForm = document.getElementById("branch-form");
  const untilPanel = document.getElementById("until-panel");
  const untilForm = document.getElementById("until-form");
  const play = document.getElementById("play");
  const pair = document.getElementById("pair");
  const charts = document.getElementById("charts");
  const controlsBar = document.querySelector(".controls");
  const moreToggle = document.getElementById("more-toggle");
  const counter = document.querySelector("[data-testid=step-counter]");
  const playEvery = 900; // ms between steps while playing
  const darkScheme = window.matchMedia("(prefers-color-scheme: dark)");

  // Classroom: the instructor's secret leaves the address bar at once (the
  // server keeps it in a cookie), so a projected page shows nothing to copy.
  if (new URLSearchParams(location.search).has("teach")) {
    const u = new URL(location.href);
    u.searchParams.delete("teach");
    history.replaceState(history.state, "", u.pathname + u.search + u.hash);
  }

  // Export HTML: the session's run, comparison or branch tree as one
  // self-contained file (tracer export --html); Import takes it back.
  fileInput.accept += ",.html,text/html";
  const exportLink = importForm.querySelector("[data-testid=trace-export]");
  if (exportLink) {
    const html = exportLink.cloneNode(false);
    html.href = exportLink.getAttribute("href") + "&format=html";
    html.download = "tracer-trace.html";
    html.dataset.testid = "trace-export-html";
    html.textContent = body.dataset.lang === "hi" ? "HTML सहेजें" : "Export HTML";
    exportLink.after(" ", html);
  }

  // The language, shared with the lesson pages through their stored state
  // ({lang, ...} under "tracer.lessons"): ?lang= wins and is remembered;
  // without one, a remembered language other than the page's reloads the
  // page in it. The session keeps the page's language for its views.
  const langStore = "tracer.lessons";
  const loadState = () => {
    try { return JSON.parse(localStorage.getItem(langStore) || "{}") || {}; } catch { return {}; }
  };
  const saveLang = (lang) => {
    const s = loadState();
    s.lang = lang;
    try { localStorage.setItem(langStore, JSON.stringify(s)); } catch { /* private mode */ }
  };
  const askedLang = new URLSearchParams(location.search).get("lang");
  if (askedLang) {
    saveLang(askedLang);
  } else {
    const stored = loadState().lang;
    if (stored && stored !== body.dataset.lang) {
      const u = new URL(location.href);
      u.searchParams.set("lang", stored);
      location.replace(u.toString());
      return;
    }
  }
  document.querySelectorAll("[data-testid=lang-switch] a").forEach((a) => {
    a.addEventListener("click", () => saveLang(a.dataset.lang));
  });
  // msg fills a message of the page's language: msg("msgStatus", {status: "500"}).
  const msg = (name, values) => String(body.dataset[name] || "").replace(/\{(\w+)\}/g, (_, k) => (values && k in values ? values[k] : ""));

  // reveal: the next view is a new run's: fold the run form away and show
  // the run at the top of the window.
  let reveal = false;
  // revealStepper scrolls the stepper's top to just below the sticky controls.
  function revealStepper() {
    const controls = document.querySelector(".controls");
    const top = stepper.getBoundingClientRect().top + window.scrollY - (controls ? controls.offsetHeight : 0);
    window.scrollTo({ top: Math.max(0, top), behavior: "instant" });
  }
  let ws = null;
  let queue = [];
  let timer = null;
  let lastSeq = 0;
  let retry = 0;

  function connect() {
    if (ws && ws.readyState <= WebSocket.OPEN) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    ws = new WebSocket(scheme + location.host + body.dataset.ws);
    ws.onopen = () => {
      retry = 0;
      const pending = queue;
      queue = [];
      if (darkScheme.matches) {
        sentDark = true;
        pending.unshift({ type: "charts", on: charts.checked, dark: true });
      }
      if (pending.length === 0) pending.push({ type: "view" });
      for (const m of pending) ws.send(JSON.stringify(m));
    };
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return; }
      handle(m);
    };
    ws.onclose = (ev) => {
      stopPlay();
      // The server restarting or a dropped network: try again a few times.
      if (ev.code !== 1008 && retry < 5) {
        retry++;
        setTimeout(() => { if (queue.length === 0) queue.push({ type: "view" }); connect(); }, 300 * retry);
      }
    };
  }

  // send asks the server for a change. An error shown stays until the
  // learner does something else: views streaming in do not hide it.
  function send(m) {
    if (m.type !== "view") showError("");
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(m));
      return;
    }
    queue.push(m);
    connect();
  }

  // queued: how many runs are ahead of this page's in the line for a
  // generation slot; null when it waits in none.
  let queued = null;
  function showQueue() {
    const st = stepper.querySelector("[data-testid=run-status]");
    if (queued === null || !st || st.dataset.state !== "running") return;
    st.textContent = msg("msgQueued", { ahead: String(queued) });
    st.dataset.queue = String(queued);
  }

  // show puts a view's HTML in the stepper.
  function show(html, m) {
    stepper.innerHTML = html;
    showQueue();
    body.classList.toggle("running", !!m.running);
    sync();
    if (reveal) {
      reveal = false;
      runPanel.open = false;
      revealStepper();
    }
    document.dispatchEvent(new CustomEvent("tracer:view", { detail: m }));
  }

  // Classroom: a page that follows the instructor holds the instructor's
  // views as the server's stream sends them (web/live): each fragment
  // once, each view as its fragments' numbers, then a cursor per move.
  const cast = { epoch: 0, frags: [], views: [] };
  function applyCast(m) {
    if (m.frags_from === 0 && m.views_from === 0) {
      cast.epoch = m.epoch;
      cast.frags = [];
      cast.views = [];
    }
    if (m.epoch !== cast.epoch || m.frags_from !== cast.frags.length || m.views_from !== cast.views.length) {
      send({ type: "view" }); // a gap: ask for the stream from its start
      return;
    }
    // The views' download links name this page's session.
    const mine = "session=" + body.dataset.session + "&";
    for (const f of m.frags) cast.frags.push(f.includes("session=follower&") ? f.replaceAll("session=follower&", mine) : f);
    for (const v of m.views) cast.views.push(v);
    if (m.view < 0) return; // more of the stream follows before its view
    const view = cast.views[m.view];
    if (!view) return;
    const parts = [];
    let id = -1;
    for (const d of view) {
      id += d;
      parts.push(cast.frags[id]);
    }
    show(parts.join(""), m);
  }

  // The instructor's page hears of the class every second.
  function classStatus(m) {
    const el = document.getElementById("class-status");
    if (!el) return;
    const fill = (name, values) => String(el.dataset[name] || "").replace(/\{(\w+)\}/g, (_, k) => (k in values ? values[k] : ""));
    let text = fill("msgClass", m) + " · " + (m.behind > 1 ? fill("msgBehind", m) : fill("msgCaughtUp", m));
    if (m.positions > 0 && m.ahead < m.positions) text += " · " + fill("msgAhead", m);
    el.textContent = text;
    el.dataset.following = String(m.following);
    el.dataset.detached = String(m.detached);
    el.dataset.behind = String(m.behind);
    el.classList.toggle("behind", m.behind > 1);
    el.hidden = false;
    const recall = document.getElementById("class-recall");
    if (recall) recall.hidden = !(m.detached > 0);
  }
  // The instructor brings every detached student back to the class.
  document.getElementById("class-recall")?.addEventListener("click", () => send({ type: "recall" }));
  // Projector mode: large type for the back of the room, remembered.
  const projector = document.getElementById("projector");
  if (projector) {
    const set = (on) => {
      document.body.classList.toggle("projector", on);
      projector.setAttribute("aria-pressed", String(on));
      try { localStorage.setItem("tracer.projector", on ? "1" : ""); } catch { /* private mode */ }
    };
    let saved = false;
    try { saved = localStorage.getItem("tracer.projector") === "1"; } catch { /* private mode */ }
    set(saved);
    projector.addEventListener("click", () => set(!document.body.classList.contains("projector")));
  }

  function handle(m) {
    if (!m || typeof m !== "object") return;
    if (m.type === "view" && typeof m.html === "string") {
      if (typeof m.seq === "number") {
        if (m.seq < lastSeq) return; // an older view overtaken by a newer one
        lastSeq = m.seq;
      }
      show(m.html, m);
    } else if (m.type === "cast") {
      applyCast(m);
    } else if (m.type === "class") {
      classStatus(m);
    } else if (m.type === "quiz" && typeof m.html === "string") {
      // The students' quiz answers changed: the dashboard's counts anew.
      const el = document.getElementById("class-quiz");
      if (el) el.outerHTML = m.html;
    } else if (m.type === "queue") {
      queued = typeof m.ahead === "number" && m.ahead >= 0 ? m.ahead : null;
      showQueue();
    } else if (m.type === "whatif") {
      document.dispatchEvent(new CustomEvent("tracer:whatif", { detail: m })); // whatif.js
    } else if (m.type === "error") {
      const text = String(m.message || msg("msgFailed"));
      if (m.refused) showRefused(text, m.field);
      else if (!m.shown) showError(text); // a failed run's status shows its error
      stopPlay();
      document.dispatchEvent(new Event("tracer:error")); // whatif.js
    } else if (m.type === "expired") {
      // The server forgot this page's session (it restarted, or the page
      // was away too long): say so, and reload into a fresh session.
      showError(String(m.message || ""));
      const u = new URL(location.href);
      u.searchParams.delete("session");
      setTimeout(() => location.assign(u.toString()), 1500);
    } else if (m.type === "progress" || m.type === "pulled") {
      const p = document.getElementById("pull-progress");
      if (p) p.textContent = String(m.message || "");
      // The downloaded model joins the menu, which the page renders: load
      // the page again on the same session.
      if (m.type === "pulled") {
        const u = new URL(location.href);
        u.searchParams.set("session", body.dataset.session);
        setTimeout(() => location.assign(u.toString()), 800);
      }
    }
  }

  function showError(text) {
    errorBox.textContent = text;
    errorBox.hidden = text === "";
  }

  // showRefused says why the server refused a run beside the run form,
  // which stays open on the run shown before, and marks the field the
  // message names and puts the cursor in it.
  function showRefused(text, field) {
    reveal = false;
    runPanel.open = true;
    runError.textContent = text;
    runError.hidden = false;
    const el = field ? runForm.elements.namedItem(field) : null;
    if (!(el instanceof HTMLElement)) return;
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-describedby", runError.id);
    el.focus();
  }

  // clearRefused takes a refusal's message and mark away: a new run is asked for.
  function clearRefused() {
    runError.hidden = true;
    runError.textContent = "";
    for (const el of runForm.querySelectorAll("[aria-invalid]")) {
      el.removeAttribute("aria-invalid");
      el.removeAttribute("aria-describedby");
    }
  }

  // sync enables the buttons for the position the fragment shows.
  function sync() {
    const pos = stepper.querySelector("[data-testid=step-index]");
    if (!pos) return;
    const i = Number(pos.dataset.index), n = Number(pos.dataset.count);
    counter.textContent = n > 0 ? (i + 1) + " / " + n : "0 / 0"; // view.counterText
    for (const b of document.querySelectorAll("[data-move=first], [data-move=prev]")) b.disabled = i <= 0;
    for (const b of document.querySelectorAll("[data-move=next], [data-move=last]")) b.disabled = i >= n - 1;
    if (i >= n - 1 && !body.classList.contains("running")) stopPlay();
    play.disabled = i >= n - 1 && timer === null && !body.classList.contains("running");
    const banner = stepper.querySelector("[data-testid=classroom-banner]");
    const following = !!banner && banner.dataset.following === "true";
    body.classList.toggle("following", following);
    lockRunForm(following);
    // The colour scheme changed without telling us (some browsers skip the
    // event): ask for charts in the page's palette.
    if (darkScheme.matches !== sentDark) chartsMessage();
  }

  // A student following the instructor cannot run models: the form is
  // disabled with a one-line reason and a Detach button.
  function lockRunForm(following) {
    const lock = document.getElementById("run-lock");
    const note = document.querySelector("[data-testid=run-locked]");
    if (lock) lock.disabled = following;
    if (note) note.hidden = !following;
  }
  const runDetach = document.querySelector("[data-testid=run-detach]");
  if (runDetach) runDetach.addEventListener("click", () => send({ type: "detach" }));

  // At phone width More folds the controls after the step buttons (branch,
  // breakpoints, the toggles) into a box below the row (style.css); wider,
  // More hides and they stand in the row, and its state changes nothing.
  function setMore(open) {
    moreToggle.setAttribute("aria-expanded", String(open));
    controlsBar.classList.toggle("more-open", open);
  }
  const moreOpen = () => moreToggle.getAttribute("aria-expanded") === "true";
  // unfoldMore opens the box for a shortcut that goes into it, where it is folded.
  const unfoldMore = () => { if (moreToggle.getClientRects().length > 0) setMore(true); };
  moreToggle.addEventListener("click", () => setMore(!moreOpen()));
  // A tap elsewhere on the page folds the box away, as a menu does.
  document.addEventListener("click", (e) => {
    if (moreOpen() && e.target instanceof Node && !controlsBar.contains(e.target)) setMore(false);
  });

  function startPlay() {
    if (timer !== null) return;
    timer = setInterval(() => send({ type: "next" }), playEvery);
    play.setAttribute("aria-pressed", "true");
    play.firstChild.textContent = "⏸";
    send({ type: "next" });
  }

  function stopPlay() {
    if (timer === null) return;
    clearInterval(timer);
    timer = null;
    play.setAttribute("aria-pressed", "false");
    play.firstChild.textContent = "▶";
    sync();
  }

  function togglePlay() {
    if (timer === null) startPlay(); else stopPlay();
  }

  // formObject reads a form's fields as strings, as the server expects.
  function formObject(form) {
    const o = {};
    for (const [k, v] of new FormData(form)) o[k] = String(v);
    return o;
  }

  function syncRunForm() {
    const chat = runForm.elements.input.value === "chat";
    for (const el of runForm.querySelectorAll(".chat-only")) el.hidden = !chat;
  }

  runForm.addEventListener("submit", (e) => {
    e.preventDefault();
    stopPlay();
    const form = formObject(runForm);
    delete form.variants;
    delete form.compare_model; // Compare's second model
    delete form.pull; // the download box's field, if a cached page still names it
    // The new run's first view folds the form away and shows at the top;
    // a refusal keeps the form open (showRefused).
    clearRefused();
    reveal = true;
    send({ type: "generate", form });
  });
  runForm.elements.input.addEventListener("change", syncRunForm);
  // Editing a marked field takes its mark away; the message stays until the next run.
  runForm.addEventListener("input", (e) => {
    if (e.target instanceof Element && e.target.hasAttribute("aria-invalid")) {
      e.target.removeAttribute("aria-invalid");
      e.target.removeAttribute("aria-describedby");
    }
  });
  const pullButton = document.getElementById("pull");
  if (pullButton) {
    pullButton.addEventListener("click", () => {
      const repo = document.getElementById("pull-repo").value.trim();
      if (repo !== "") send({ type: "pull", repo: repo });
    });
  }
  document.getElementById("compare").addEventListener("click", () => {
    stopPlay();
    const form = formObject(runForm);
    delete form.pull;
    clearRefused();
    reveal = true;
    send({ type: "compare", form });
  });
  for (const b of document.querySelectorAll("#stop, .controls .stop")) {
    b.addEventListener("click", () => send({ type: "stop" }));
  }

  // plainToken reads a token as the page writes it (web/marks) back into
  // its text: ␣ a space, ⏎ a newline, → a tab.
  function plainToken(shown) {
    return shown.replace(/␣/g, " ").replace(/⏎/g, "\n").replace(/→/g, "\t");
  }

  // branchWith branches to what the Branch box holds: an id ("403" or
  // "#403"); a token as a JSON string, its spaces kept (" the" typed with
  // its quotes, "\n"); or a token as typed, trimmed, where the page's marks
  // stand for whitespace as they do on the page (plainToken).
  function branchWith(raw) {
    const typed = raw.trim();
    if (typed.startsWith('"')) {
      let tok = null;
      try { tok = JSON.parse(typed); } catch { /* shown below */ }
      if (typeof tok !== "string" || tok === "") {
        showError(msg("msgQuoted", { text: typed })); // the page's words (dbg-branch-quoted)
        return;
      }
      send({ type: "branch", token: tok });
      return;
    }
    const text = typed.replace(/^#(?=\d+$)/, "");
    if (text === "") return;
    if (/^\d+$/.test(text)) send({ type: "branch", id: Number(text) });
    else send({ type: "branch", token: plainToken(text) });
  }
  // Branch and Run to breakpoint fold the box away: the view they bring
  // shows below it.
  branchForm.addEventListener("submit", (e) => {
    e.preventDefault();
    stopPlay();
    setMore(false);
    branchWith(branchForm.elements.token.value);
  });

  untilForm.addEventListener("submit", (e) => {
    e.preventDefault();
    stopPlay();
    setMore(false);
    const until = formObject(untilForm);
    for (const k of Object.keys(until)) if (until[k].trim() === "") delete until[k];
    send({ type: "until", until });
  });

  pair.addEventListener("change", () => send({ type: "pair", on: pair.checked }));
  let sentDark = false;
  const chartsMessage = () => {
    sentDark = darkScheme.matches;
    send({ type: "charts", on: charts.checked, dark: sentDark });
  };
  charts.addEventListener("change", chartsMessage);
  darkScheme.addEventListener("change", chartsMessage);

  // Clicks inside the fragment: a candidate branches, a tree node selects a
  // branch, a tab picks a batch row, the classroom banner detaches.
  stepper.addEventListener("click", (e) => {
    const t = e.target instanceof Element ? e.target.closest("button") : null;
    if (!t) return;
    if (t.dataset.jump !== undefined) {
      stopPlay();
      send({ type: "step", index: Number(t.dataset.jump) });
    } else if (t.dataset.branchId !== undefined) {
      stopPlay();
      send({ type: "branch", id: Number(t.dataset.branchId) });
    } else if (t.dataset.branch !== undefined) {
      send({ type: "select", branch: Number(t.dataset.branch) });
    } else if (t.dataset.row !== undefined) {
      send({ type: "row", index: Number(t.dataset.row) });
    } else if (t.dataset.action === "detach" || t.dataset.action === "rejoin") {
      send({ type: t.dataset.action });
    }
  });

  for (const b of document.querySelectorAll("[data-move]")) {
    b.addEventListener("click", () => send({ type: b.dataset.move }));
  }
  play.addEventListener("click", togglePlay);

  function toggleDetach() {
    const banner = stepper.querySelector("[data-testid=classroom-banner]");
    if (!banner) return;
    send({ type: banner.dataset.following === "true" ? "detach" : "rejoin" });
  }

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target instanceof HTMLElement && e.target.closest("input, textarea, select")) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (e.key === "Escape" && moreOpen()) {
      // Focus in the box (or left on the page by the first Escape, out of
      // a field) goes back to More.
      const f = document.activeElement;
      const lost = !f || f === body || controlsBar.querySelector(".more").contains(f);
      setMore(false);
      if (lost) moreToggle.focus();
      return;
    }
    const moves = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
    const act = {
      " ": togglePlay,
      g: () => { runPanel.open = true; runForm.elements.prompt.focus(); },
      s: () => send({ type: "stop" }),
      b: () => { unfoldMore(); branchForm.elements.token.focus(); },
      u: () => { unfoldMore(); untilPanel.open = true; untilForm.elements.top1_below.focus(); },
      p: () => { pair.checked = !pair.checked; pair.dispatchEvent(new Event("change")); },
      c: () => { charts.checked = !charts.checked; charts.dispatchEvent(new Event("change")); },
      d: toggleDetach,
    };
    if (moves[e.key]) {
      e.preventDefault();
      send({ type: moves[e.key] });
    } else if (act[e.key]) {
      e.preventDefault();
      act[e.key]();
    }
  });

  fileInput.addEventListener("change", async () => {
    if (!fileInput.files || fileInput.files.length === 0) return;
    stopPlay();
    showError("");
    const data = new FormData(importForm);
    fileInput.value = "";
    let m = null;
    try {
      const r = await fetch(importForm.action, { method: "POST", body: data, headers: { Accept: "application/json" } });
      m = await r.json().catch(() => ({ type: "error", message: msg("msgStatus", { status: (r.status + " " + r.statusText).trim() }) }));
    } catch (err) {
      m = { type: "error", message: msg("msgUnreachable", { error: err.message }) };
    }
    handle(m);
  });

  // fillFromLink fills the run form with the settings of the deep link the
  // page was opened with (/?model=…&prompt=…&seed=…, as a lesson figure's
  // "open in the debugger" writes it): the run the page shows, so that
  // Generate (or Compare, for a link with variants) runs it again. A value
  // a menu does not offer joins it, as the link wrote it. A link that
  // failed shows its error over the toy's run and fills nothing.
  function fillFromLink() {
    const q = new URLSearchParams(location.search);
    if (!q.has("model") || !errorBox.hidden) return;
    const bools = { true: "true", on: "true", 1: "true", false: "false", off: "false", 0: "false" };
    for (const el of runForm.elements) {
      if (!el.name || !q.has(el.name)) continue;
      let v = q.get(el.name);
      if (el instanceof HTMLSelectElement) {
        v = v.trim();
        if (v === "") {
          el.selectedIndex = 0; // the default
          continue;
        }
        if (el.name === "do_sample" || el.name === "use_cache") v = bools[v.toLowerCase()] ?? v;
        if (![...el.options].some((o) => o.value === v)) el.add(new Option(v, v));
      }
      el.value = v;
    }
  }
  fillFromLink();

  // whatif.js talks to the server through the page's socket.
  window.tracer = { send };
  document.dispatchEvent(new Event("tracer:ready"));

  syncRunForm();
  connect();
})();
