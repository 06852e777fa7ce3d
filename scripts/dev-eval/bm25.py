#!/usr/bin/env python3
"""Independent BM25 baseline for the dev evaluation.

Usage: bm25.py CORPUS_DIR DATASET_JSON [--ranks=FILE] [--cjk] > metrics.json

--ranks=FILE also writes one JSON line per question to FILE: its id, the
first 10 distinct pages and the 1-based rank of the first relevant one (0
when none is in the 10), to compare with the engine's lists per question.

Every HTML page of CORPUS_DIR (parsed with Python's html.parser, script and
style left out) is cut into heading sections (a new section at each h1-h6);
each section is cut at white space into pieces of at most 1200 characters.
The pieces go into an SQLite FTS5 table with the porter tokenizer; each
question is matched as an OR of its words and ranked by bm25(). The ranked
pieces are mapped to their pages; a .txt page is one section.
With --cjk (the baseline of the non-English sets) nothing is stemmed (the
unicode61 tokenizer alone) and every run of Han, kana or Hangul characters,
in the pieces and in the questions, is written as its overlapping character
bigrams (a lone character as itself), the idea of Elasticsearch's cjk
analyzer; a run of over 1200 characters without white space is cut into
pieces rather than cut short. hit@1, hit@5, MRR@10 and nDCG@10 (binary
relevance) are computed over the first 10 distinct pages, as
`askyourdocs eval` does. Nothing here shares code with the engine.
"""
import html.parser
import json
import math
import os
import re
import sqlite3
import sys

MAX = 1200
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
SKIP = {"script", "style", "head"}
BLOCK = {"p", "div", "li", "tr", "br", "pre", "dt", "dd", "table", "section", "ul", "ol", "blockquote"}


class Sections(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections = [[]]
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        elif tag in HEADINGS:
            self.sections.append([])
        elif tag in BLOCK:
            self.sections[-1].append(" ")

    def handle_endtag(self, tag):
        if tag in SKIP and self.skip:
            self.skip -= 1
        elif tag in BLOCK or tag in HEADINGS:
            self.sections[-1].append(" ")

    def handle_data(self, data):
        if not self.skip:
            self.sections[-1].append(data)


def pieces(text, cjk=False):
    words = text.split()
    if cjk:
        words = [w[i:i + MAX] for w in words for i in range(0, len(w), MAX)]
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > MAX:
            yield cur
            cur = w[:MAX]
        else:
            cur = (cur + " " + w) if cur else w[:MAX]
    if cur:
        yield cur


CJK_RUN = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def bigrams(text):
    """Each CJK run of text as its overlapping bigrams, space-separated."""
    def run(m):
        s = m.group(0)
        if len(s) == 1:
            return " " + s + " "
        return " " + " ".join(s[i:i + 2] for i in range(len(s) - 1)) + " "
    return CJK_RUN.sub(run, text)


def build(corpus, cjk):
    db = sqlite3.connect(":memory:")
    tok = "unicode61" if cjk else "porter unicode61"
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, page UNINDEXED, tokenize='%s')" % tok)
    n = 0
    for root, _, files in os.walk(corpus):
        for f in sorted(files):
            if not f.endswith(".html") and not f.endswith(".txt"):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, corpus).replace(os.sep, "/")
            with open(p, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if f.endswith(".txt"):
                sections = [text]
            else:
                parser = Sections()
                parser.feed(text)
                sections = ["".join(sec) for sec in parser.sections]
            for sec in sections:
                for piece in pieces(sec, cjk):
                    db.execute("INSERT INTO t(body, page) VALUES (?, ?)", (bigrams(piece) if cjk else piece, rel))
                    n += 1
    return db, n


def matches(page, relevant):
    return any(page == r or page.endswith("/" + r) for r in relevant)


def main():
    corpus, dataset = sys.argv[1], sys.argv[2]
    ranks = None
    cjk = False
    for a in sys.argv[3:]:
        if a == "--cjk":
            cjk = True
        elif a.startswith("--ranks="):
            ranks = open(a[len("--ranks="):], "w")
        else:
            sys.exit("bm25.py: unknown argument %r" % a)
    db, n = build(corpus, cjk)
    with open(dataset) as fh:
        cases = json.load(fh)["cases"]
    h1 = h5 = mrr = ndcg = 0.0
    for c in cases:
        question = bigrams(c["question"]) if cjk else c["question"]
        words = re.findall(r"\w+", question.lower())
        if not words:
            continue
        q = " OR ".join('"%s"' % w for w in words)
        pages = []
        for (page,) in db.execute("SELECT page FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 200", (q,)):
            if page not in pages:
                pages.append(page)
            if len(pages) == 10:
                break
        rel = [i for i, p in enumerate(pages) if matches(p, c["relevant"])]
        if ranks:
            json.dump({"id": c.get("id", ""), "pages": pages, "rank": rel[0] + 1 if rel else 0}, ranks)
            ranks.write("\n")
        if rel:
            h1 += rel[0] == 0
            h5 += rel[0] < 5
            mrr += 1 / (rel[0] + 1)
        dcg = sum(1 / math.log2(i + 2) for i in rel)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(c["relevant"]), 10)))
        ndcg += dcg / ideal
    if ranks:
        ranks.close()
    k = len(cases)
    json.dump({"mode": "bm25-fts5-cjk" if cjk else "bm25-fts5", "pieces": n, "metrics": {"hitAt1": h1 / k, "hitAt5": h5 / k, "mrrAt10": mrr / k, "ndcgAt10": ndcg / k}}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
