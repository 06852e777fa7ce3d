#!/usr/bin/env python3
"""Answer-quality scoring for the answer sets (scripts/dev-eval/answers.go).

Usage: answers.py SET_DIR ASKYOURDOCS_BINARY > metrics.json

SET_DIR holds corpus/, answers.json and index/ (the CLI's index of the
corpus). Each question is asked through the CLI without a model
(`askyourdocs --json --data SET_DIR/index ask QUESTION`, its extractive
answer), and answered by the lead-2 baseline: the first two sentences of
the top section of an independent SQLite FTS5 bm25() over heading
sections (the sections of bm25.py, Porter-stemmed, the question's words
ORed), the heading left out; sections of under six words (a table of
contents' headings) are passed over.

An answer is scored by its words (lower-cased \\w+ runs; the citation
marks [1] and the "Sources" lines are not words of the answer):
recall = the gold paragraph's words found in the answer (counted with
multiplicity), precision = the answer's words found in the gold
answer's section (with its question), F1 their harmonic mean, and the
answer's length in words. Means over the questions are printed as JSON,
with the per-question rows in SET_DIR/answers-rows.jsonl. Nothing here
shares code with the engine.
"""
import collections
import json
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bm25  # noqa: E402  (the baseline's heading sections)

WORD = re.compile(r"\w+")
SENT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


def words(text):
    return WORD.findall(text.lower())


def score(answer, gold, section):
    a = words(answer)
    if not a:
        return 0.0, 0.0, 0.0, 0
    ac = collections.Counter(a)
    gc = collections.Counter(words(gold))
    sc = collections.Counter(words(section))
    recall = sum(min(n, ac[w]) for w, n in gc.items()) / max(1, sum(gc.values()))
    precision = sum(min(n, sc[w]) for w, n in ac.items()) / len(a)
    f1 = 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)
    return recall, precision, f1, len(a)


class Sections(bm25.Sections):
    """bm25.py's heading sections, with each section's heading kept apart."""

    def __init__(self):
        super().__init__()
        self.heads = [""]
        self.in_head = False

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        if tag in HEADINGS:
            self.heads.append("")
            self.in_head = True

    def handle_endtag(self, tag):
        super().handle_endtag(tag)
        if tag in HEADINGS:
            self.in_head = False

    def handle_data(self, data):
        super().handle_data(data)
        if self.in_head and not self.skip:
            self.heads[-1] += data


def build(corpus):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, sec UNINDEXED, tokenize='porter unicode61')")
    bodies = []
    for root, _, files in os.walk(corpus):
        for f in sorted(files):
            if not f.endswith(".html") and not f.endswith(".txt"):
                continue
            with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if f.endswith(".txt"):
                secs = [("", text)]
            else:
                p = Sections()
                p.feed(text)
                secs = []
                for head, sec in zip(p.heads, p.sections):
                    body = "".join(sec)
                    h = " ".join(head.split())
                    flat = " ".join(body.split())
                    if h and flat.startswith(h):
                        flat = flat[len(h):]
                    secs.append((h, flat))
            for head, body in secs:
                bodies.append(" ".join(body.split()))
                for piece in bm25.pieces(head + " " + body):
                    db.execute("INSERT INTO t(body, sec) VALUES (?, ?)", (piece, len(bodies) - 1))
    return db, bodies


def lead2(db, bodies, question):
    ws = WORD.findall(question.lower())
    if not ws:
        return ""
    q = " OR ".join('"%s"' % w for w in ws)
    for (sec,) in db.execute("SELECT sec FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 50", (q,)):
        if len(bodies[sec].split()) >= 6:
            return " ".join(SENT.split(bodies[sec])[:2])
    return ""


MARK = re.compile(r"\[\d+\]")


def ours(binary, index, question):
    out = subprocess.run([binary, "--json", "--data", index, "ask", question],
                         capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                              if k not in ("LLM_MODEL", "ASKYOURDOCS_DSN")})
    if out.returncode != 0:
        sys.exit("answers.py: ask %r failed: %s" % (question, out.stderr.strip()))
    return MARK.sub(" ", json.loads(out.stdout)["answer"])


def main():
    setdir, binary = sys.argv[1], sys.argv[2]
    with open(os.path.join(setdir, "answers.json")) as fh:
        cases = json.load(fh)["cases"]
    db, bodies = build(os.path.join(setdir, "corpus"))
    sums = {"ours": [0.0] * 4, "lead2": [0.0] * 4}
    gold_words = 0
    with open(os.path.join(setdir, "answers-rows.jsonl"), "w") as rows:
        for c in cases:
            row = {"id": c["id"], "question": c["question"]}
            for name, text in (("ours", ours(binary, os.path.join(setdir, "index"), c["question"])),
                               ("lead2", lead2(db, bodies, c["question"]))):
                r = score(text, c["gold"], c["section"])
                for i, v in enumerate(r):
                    sums[name][i] += v
                row[name] = {"recall": r[0], "precision": r[1], "f1": r[2], "words": r[3], "text": text}
            gold_words += len(words(c["gold"]))
            rows.write(json.dumps(row) + "\n")
    k = len(cases)
    res = {"questions": k, "goldWords": gold_words / k}
    for name, s in sums.items():
        res[name] = {"recall": s[0] / k, "precision": s[1] / k, "f1": s[2] / k, "words": s[3] / k}
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
