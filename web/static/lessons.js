// The lesson pages' script: progress, the chosen language and the chosen
// model kept in localStorage, and the quiz's feedback. The pages work without it, less
// the progress and the quiz.
"use strict";

(() => {
	const store = "tracer.lessons";

	// load returns the saved state: {lang, visited, completed, quiz}.
	const load = () => {
		let s = {};
		try { s = JSON.parse(localStorage.getItem(store) || "{}") || {}; } catch { s = {}; }
		return { lang: s.lang || "", model: s.model || "", visited: s.visited || {}, completed: s.completed || {}, quiz: s.quiz || {} };
	};
	const save = (s) => { try { localStorage.setItem(store, JSON.stringify(s)); } catch { /* private mode: no progress */ } };

	const body = document.body;
	const lang = body.dataset.lang;
	const state = load();

	// The language and the model of the real runs: ?lang= and ?model= win
	// and are remembered; without them, a remembered choice other than the
	// page's reloads the page with it. A remembered model this server does
	// not offer is left alone.
	const params = new URLSearchParams(location.search);
	const picker = document.querySelector("[data-testid=model-picker]");
	const offered = (m) => !!picker && [...picker.querySelectorAll("option")].some((o) => o.value === m && !o.disabled);
	const reload = new URL(location.href);
	let again = false;
	if (params.get("lang")) {
		state.lang = params.get("lang");
	} else if (state.lang && state.lang !== lang) {
		reload.searchParams.set("lang", state.lang);
		again = true;
	}
	if (picker && params.get("model")) {
		state.model = picker.dataset.chosen || state.model;
	} else if (picker && state.model && state.model !== picker.dataset.chosen && offered(state.model)) {
		reload.searchParams.set("model", state.model);
		again = true;
	}
	save(state);
	if (again) {
		location.replace(reload.toString());
		return;
	}
	document.querySelectorAll("[data-testid=lang-switch] a").forEach((a) => {
		a.addEventListener("click", () => { state.lang = a.dataset.lang; save(state); });
	});
	if (picker) {
		const select = picker.querySelector("[data-testid=model-select]");
		select.addEventListener("change", () => {
			state.model = select.value;
			save(state);
			picker.requestSubmit();
		});
		picker.addEventListener("submit", () => { state.model = select.value; save(state); });
	}
	// Links to other lesson pages carry the model, so they open on it at once.
	if (state.model) {
		document.querySelectorAll("[data-testid=lesson-next], [data-testid=lesson-prev], [data-testid=lang-switch] a, [data-testid=lesson-link]").forEach((a) => {
			const u = new URL(a.href, location.href);
			u.searchParams.set("model", state.model);
			a.href = u.pathname + u.search;
		});
	}

	// A step: visited on load, completed on Next or at the lesson's end.
	const step = document.querySelector("[data-testid=lesson-step]");
	if (step) {
		const key = step.dataset.lesson + "/" + step.dataset.step;
		state.visited[key] = true;
		if (Number(step.dataset.index) + 1 === Number(step.dataset.count)) {
			state.completed[key] = true;
		}
		save(state);
		const next = document.querySelector("[data-testid=lesson-next]");
		if (next) {
			next.addEventListener("click", () => { state.completed[key] = true; save(state); });
		}
		setUpQuiz(key, step);
	}

	// The list: each lesson's progress.
	document.querySelectorAll("[data-testid=lesson-progress]").forEach((p) => {
		const keys = p.dataset.steps.split(" ");
		const done = keys.filter((k) => state.completed[k]).length;
		p.textContent = p.dataset.template.replace("{done}", String(done)).replace("{total}", String(keys.length));
		p.dataset.done = String(done);
	});

	// Tests wait for this before they click: the handlers are in place.
	body.dataset.ready = "true";

	// setUpQuiz shows an option's feedback when it is chosen, and records
	// the answer. On a classroom server (data-answer-url) it also sends
	// each question's first answer, for the instructor's counts; the
	// server counts one answer a question from each student.
	function setUpQuiz(key, step) {
		const quiz = document.querySelector("[data-testid=quiz]");
		if (!quiz) return;
		const sent = {}; // questions answered to the server from this page
		const send = (question, option) => {
			if (!quiz.dataset.answerUrl || sent[question]) return;
			sent[question] = true;
			const answer = { lesson: step.dataset.lesson, step: step.dataset.step, question, option };
			fetch(quiz.dataset.answerUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(answer) })
				// data-sent counts the answers the server has replied to (tests wait for it).
				.then(() => { quiz.dataset.sent = String(Number(quiz.dataset.sent || 0) + 1); })
				.catch(() => { sent[question] = false; }); // offline: the next click tries again
		};
		quiz.querySelectorAll(".question").forEach((q) => {
			const feedback = q.querySelector("[data-testid=quiz-feedback]");
			q.querySelectorAll("[data-testid=quiz-option]").forEach((o) => {
				o.addEventListener("click", () => {
					const right = o.dataset.correct === "true";
					const tpl = q.querySelector(`template[data-feedback="${CSS.escape(o.dataset.option)}"]`);
					const verdict = document.createElement("strong");
					verdict.textContent = (right ? quiz.dataset.correct : quiz.dataset.notQuite) + " ";
					feedback.replaceChildren(verdict, tpl.content.cloneNode(true));
					feedback.className = "feedback " + (right ? "right" : "wrong");
					feedback.dataset.right = String(right);
					feedback.hidden = false;
					q.querySelectorAll("[data-testid=quiz-option]").forEach((x) => x.classList.toggle("chosen", x === o));
					const s = load();
					const qk = key + "/" + q.dataset.question;
					s.quiz[qk] = right || s.quiz[qk] === true ? true : false;
					save(s);
					send(q.dataset.question, o.dataset.option);
				});
			});
		});
	}
})();
