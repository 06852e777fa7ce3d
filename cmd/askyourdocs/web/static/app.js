// askyourdocs serve: streamed answers, thumbs without a reload and live
// job progress. The pages work without this script; it only improves them.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// safeHref allows only the app's own passage and file links and web pages.
function safeHref(u) {
  return /^(https?:\/\/|\/files\?|\/view\?)/.test(u) ? u : "#";
}

function renderParagraphs(div, text) {
  div.replaceChildren(...text.trim().split("\n\n").map(p => el("p", {}, p)));
}

async function postJSON(url, body, accept, signal) {
  return fetch(url, {
    method: "POST",
    headers: {"Content-Type": "application/json", "Accept": accept || "application/json", "X-CSRF-Token": csrf()},
    body: JSON.stringify(body),
    signal,
  });
}

function feedbackButtons(id) {
  const group = el("div", {class: "feedback", role: "group", "aria-label": "Was this answer helpful?"});
  for (const [rating, label] of [["up", "Helpful"], ["down", "Not helpful"]]) {
    const b = el("button", {type: "button", class: "thumb", "data-rating": rating}, label);
    b.addEventListener("click", () => rate(group, id, rating));
    group.append(b);
  }
  return group;
}

async function rate(group, id, rating) {
  const resp = await postJSON("/api/feedback", {id, rating});
  const old = group.querySelector(".rated");
  if (old) old.remove();
  if (!resp.ok) {
    group.append(el("span", {class: "rated error", role: "alert"}, "Rating failed"));
    return;
  }
  for (const b of group.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.rating === rating));
  group.append(el("span", {class: "rated", role: "status"}, "Thanks, rating recorded"));
}

function historyOf(form) {
  const qs = [...form.querySelectorAll('input[name="hq"]')].map(i => i.value);
  const as = [...form.querySelectorAll('input[name="ha"]')].map(i => i.value);
  return qs.map((q, i) => ({question: q, answer: as[i] || ""}));
}

// busy is the answer being streamed (its AbortController), null when none:
// a second Enter or click while an answer streams sends nothing.
let busy = null;

async function ask(form, text) {
  if (busy) return;
  const textarea = form.querySelector("textarea");
  const question = (text || textarea.value).trim();
  if (!question) return;
  const conv = document.getElementById("conversation");
  for (const e of conv.querySelectorAll(".error")) e.remove();
  const front = document.querySelector(".front");
  if (front) front.remove();
  const turn = el("article", {class: "turn", "aria-busy": "true"});
  const answer = el("div", {class: "a"});
  const stream = el("p", {class: "streaming"});
  answer.append(stream);
  turn.append(el("p", {class: "q"}, question), answer);
  conv.append(turn);
  const button = form.querySelector('button[type="submit"]');
  const stop = document.getElementById("stop");
  const ctrl = new AbortController();
  busy = ctrl;
  button.disabled = true;
  form.setAttribute("aria-busy", "true");
  if (stop) { stop.hidden = false; stop.onclick = () => ctrl.abort(); }
  try {
    const resp = await postJSON("/api/ask", {question, history: historyOf(form)}, "text/event-stream", ctrl.signal);
    if (!resp.ok || !resp.body) {
      const body = await resp.json().catch(() => ({}));
      throw new Error(body.error || resp.statusText);
    }
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "", done = null;
    for (;;) {
      const {value, done: end} = await reader.read();
      if (end) break;
      buf += value;
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let event = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        const msg = JSON.parse(data);
        if (event === "delta") stream.textContent += msg.text;
        else if (event === "done") done = msg;
        else if (event === "error") throw new Error(msg.error);
      }
    }
    if (!done) throw new Error("the answer stream ended early");
    showAnswer(turn, answer, done);
    addHistory(form, question, done.answer);
    textarea.value = "";
    form.querySelector("label").textContent = "Follow-up question";
  } catch (err) {
    if (ctrl.signal.aborted) {
      // Stopped: what was streamed stays, marked as incomplete; it is not
      // part of the conversation a follow-up refers to.
      stream.classList.remove("streaming");
      answer.append(el("p", {class: "stopped", role: "status"}, "Stopped."));
    } else {
      turn.remove();
      conv.append(el("p", {class: "error", role: "alert"}, "Error: " + err.message));
    }
  } finally {
    turn.removeAttribute("aria-busy");
    form.removeAttribute("aria-busy");
    button.disabled = false;
    if (stop) { stop.hidden = true; stop.onclick = null; }
    busy = null;
    textarea.focus();
  }
}

function showAnswer(turn, answer, out) {
  // The sanitised answer replaces what was streamed.
  renderParagraphs(answer, out.answer);
  if (out.noMatch) answer.classList.add("nomatch");
  turn.dataset.id = out.id;
  const conf = el("p", {class: "confidence"}, "Confidence: ");
  conf.append(el("strong", {}, out.confidence));
  if (out.confidenceBasis) conf.append(" ", el("span", {class: "basis"}, "(" + out.confidenceBasis + ")"));
  turn.append(conf);
  if (out.citations.length) {
    const ol = el("ol", {class: "citations", "aria-label": "Sources"});
    for (const c of out.citations) {
      const li = el("li");
      li.append(el("a", {href: safeHref(c.url), target: "_blank", rel: "noopener"}, c.title + (c.pages ? ", p. " + c.pages : "")));
      if (c.file) li.append(" ", el("a", {href: safeHref(c.file), class: "orig", target: "_blank", rel: "noopener"}, "original"));
      li.append(el("blockquote", {}, c.excerpt));
      ol.append(li);
    }
    turn.append(ol);
  }
  if (out.id) turn.append(feedbackButtons(out.id));
}

function addHistory(form, q, a) {
  const anchor = form.querySelector("label");
  form.insertBefore(el("input", {type: "hidden", name: "hq", value: q}), anchor);
  form.insertBefore(el("input", {type: "hidden", name: "ha", value: a}), anchor);
}

// Job progress on the Index page.
const finished = s => s === "done" || s === "failed" || s === "cancelled";

function renderJob(j) {
  const li = el("li", {class: "job", "data-job": j.id, "data-status": j.status});
  li.append(el("strong", {}, j.kind), " ", el("span", {class: "status status-" + j.status}, j.status));
  if (j.summary) li.append(" ", el("span", {class: "summary"}, j.summary));
  if (j.error) li.append(el("p", {class: "error"}, j.error));
  if (j.failed && j.failed.length) {
    const ul = el("ul", {class: "failures", "aria-label": "Failed files"});
    for (const f of j.failed) {
      const item = el("li");
      item.append(el("strong", {}, f.source), ": " + f.reason);
      ul.append(item);
    }
    li.append(ul);
  }
  const det = el("details");
  if (!j.finished) det.open = true;
  det.append(el("summary", {}, "Progress"), el("pre", {class: "progress"}, j.progressLog.join("\n")));
  li.append(det);
  return li;
}

// showJobs lists the jobs now and follows them until they are finished
// (then the page reloads to list the new sources).
async function showJobs(list) {
  const resp = await fetch("/api/jobs", {headers: {"Accept": "application/json"}});
  if (!resp.ok) return location.reload();
  const jobs = await resp.json();
  list.replaceChildren(...jobs.map(renderJob));
  if (jobs.every(j => j.finished)) return location.reload();
  pollJobs(list);
}

async function pollJobs(list) {
  let wasRunning = [...list.querySelectorAll(".job")].some(li => !finished(li.dataset.status));
  while (wasRunning) {
    await new Promise(r => setTimeout(r, 700));
    const resp = await fetch("/api/jobs", {headers: {"Accept": "application/json"}});
    if (!resp.ok) return;
    const jobs = await resp.json();
    list.replaceChildren(...jobs.map(renderJob));
    if (jobs.every(j => j.finished)) {
      // Refresh the sources table once everything is indexed.
      location.reload();
      return;
    }
  }
}

// Uploads on the Index page: checked in the browser first (size, type),
// then sent with a progress bar; a refused upload is shown in the form.
function setupUpload(form) {
  const input = form.querySelector('input[type="file"]');
  const max = Number(form.dataset.maxBytes);
  const exts = (input.getAttribute("accept") || "").split(",").filter(Boolean);
  const bar = form.querySelector("progress");
  const status = form.querySelector(".upload-status");
  const fail = msg => {
    let e = form.querySelector(".upload-error");
    if (!e) { e = el("p", {class: "error upload-error", role: "alert"}); form.append(e); }
    e.textContent = msg;
    bar.hidden = true;
  };
  form.addEventListener("submit", e => {
    e.preventDefault();
    const old = form.querySelector(".upload-error");
    if (old) old.remove();
    const files = [...input.files];
    if (!files.length) return fail("Choose at least one file.");
    const bad = files.find(f => exts.length && !exts.some(x => f.name.toLowerCase().endsWith(x)));
    if (bad) return fail(bad.name + ": this file type cannot be indexed (supported: " + exts.join(", ") + ").");
    const total = files.reduce((n, f) => n + f.size, 0);
    if (max && total > max) return fail("The files are " + (total / 1048576).toFixed(1) + " MiB together; the server takes at most " + Math.floor(max / 1048576) + " MiB per upload.");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-CSRF-Token", csrf());
    bar.hidden = false;
    bar.value = 0;
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    xhr.upload.addEventListener("progress", ev => {
      if (ev.lengthComputable) {
        bar.max = ev.total;
        bar.value = ev.loaded;
        status.textContent = "Uploading: " + Math.round(100 * ev.loaded / ev.total) + " %";
      }
    });
    xhr.addEventListener("load", () => {
      button.disabled = false;
      let body = {};
      try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
      if (xhr.status === 202 && body.jobId) {
        bar.value = bar.max;
        status.textContent = "Uploaded " + files.length + (files.length === 1 ? " file" : " files") + "; indexing.";
        input.value = "";
        history.replaceState(null, "", "/index?job=" + encodeURIComponent(body.jobId) + "#jobs");
        showJobs(document.getElementById("job-list"));
        return;
      }
      status.textContent = "";
      fail("Upload refused: " + (body.error || xhr.statusText || "HTTP " + xhr.status));
    });
    xhr.addEventListener("error", () => { button.disabled = false; status.textContent = ""; fail("The upload failed: the connection was lost."); });
    xhr.send(new FormData(form));
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("ask-form");
  if (form) {
    form.addEventListener("submit", e => { e.preventDefault(); ask(form); });
    form.querySelector("textarea").addEventListener("keydown", e => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); ask(form); }
    });
    for (const ex of document.querySelectorAll("form.example")) {
      ex.addEventListener("submit", e => { e.preventDefault(); ask(form, ex.querySelector('[name="q"]').value); });
    }
  }
  const upload = document.getElementById("upload-form");
  if (upload) setupUpload(upload);
  for (const f of document.querySelectorAll('form[action="/feedback"]')) {
    f.addEventListener("submit", e => {
      e.preventDefault();
      const group = f.closest(".feedback");
      rate(group, f.querySelector('[name="id"]').value, f.querySelector('[name="rating"]').value);
    });
  }
  const jobs = document.getElementById("job-list");
  if (jobs) pollJobs(jobs);
});
