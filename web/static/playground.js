// The tokenizer playground's script: as the learner types (or picks a
// tokenizer), it fetches the same address with &partial=1 and swaps the
// result in, a moment after the last key. The page works without it: the
// form is a plain GET form. body[data-pg-state] is "pending" while a
// result is on its way and "done" once it is shown.
"use strict";

(() => {
	const form = document.getElementById("pg-form");
	if (!form) return;
	const text = form.querySelector("[name=text]");
	const wait = 150; // ms after the last change
	let timer = 0;
	let seq = 0;
	let ctl = null;

	// query is the form's fields as a query string, the text as the
	// textarea holds it (newlines as LF).
	const query = () => {
		const q = new URLSearchParams();
		for (const el of form.elements) {
			if (!el.name || el.disabled) continue;
			q.set(el.name, el.value);
		}
		return q;
	};

	// langLinks keep the text and the models: the language switch
	// reopens the page as it is.
	const langLinks = () => {
		document.querySelectorAll("[data-testid=lang-switch] a").forEach((a) => {
			const q = query();
			q.set("lang", a.dataset.lang);
			if (q.toString().length < 8000) a.href = form.getAttribute("action") + "?" + q.toString();
		});
	};

	const render = async () => {
		clearTimeout(timer);
		const mine = ++seq;
		if (ctl) ctl.abort();
		ctl = new AbortController();
		document.body.dataset.pgState = "pending";
		const q = query();
		history.replaceState(null, "", form.getAttribute("action") + "?" + q.toString());
		langLinks();
		q.set("partial", "1");
		try {
			const res = await fetch(form.getAttribute("action") + "?" + q.toString(), { signal: ctl.signal, headers: { Accept: "text/html" } });
			const html = await res.text();
			if (mine !== seq) return;
			const old = document.getElementById("pg-result");
			const tpl = document.createElement("template");
			tpl.innerHTML = html.trim();
			const next = tpl.content.firstElementChild;
			if (old && next) old.replaceWith(next);
			document.body.dataset.pgState = "done";
		} catch (e) {
			if (e.name !== "AbortError" && mine === seq) document.body.dataset.pgState = "failed";
		}
	};

	const later = () => {
		clearTimeout(timer);
		document.body.dataset.pgState = "pending";
		timer = setTimeout(render, wait);
	};

	text.addEventListener("input", later);
	form.querySelectorAll("select").forEach((s) => s.addEventListener("change", render));
	form.addEventListener("submit", (e) => { e.preventDefault(); render(); });
	langLinks();
	document.body.dataset.pgState = "done";
})();
