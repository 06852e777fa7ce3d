#!/usr/bin/env python3
"""Offline check of a page-size prior on a dev set's own chunks.

Usage: pageprior.py WORK SET [BETA ...]

Reads the chunks (URL and text) of WORK/SET/index/askyourdocs.db, the
SQLite index scripts/dev-eval/run built, into an SQLite FTS5 table (porter
tokenizer, as bm25.py), matches each question of WORK/SET/dataset.json as
an OR of its words, and ranks the chunks by bm25() divided by
1 + BETA * ln(chunks of the chunk's page), for each BETA (default 0, 0.05,
0.1, 0.2). Prints MRR@10 and hit@5 over the first 10 distinct pages per
BETA. BETA 0 is plain BM25 over the engine's chunks (bm25.py cuts its own
pieces): the difference between the two is what the chunking costs; the
other columns show what a prior against long pages does on that shape
(docs/retrieval.md, "Describing dev sets"). Nothing here shares code with
the engine.
"""
import json
import math
import re
import sqlite3
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    work, name = sys.argv[1], sys.argv[2]
    betas = [float(b) for b in sys.argv[3:]] or [0, 0.05, 0.1, 0.2]
    src = sqlite3.connect(f"{work}/{name}/index/askyourdocs.db")
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, page UNINDEXED, tokenize='porter unicode61')")
    count = {}
    for url, text in src.execute("SELECT url, text FROM chunks"):
        db.execute("INSERT INTO t VALUES (?, ?)", (text, url))
        count[url] = count.get(url, 0) + 1
    with open(f"{work}/{name}/dataset.json", encoding="utf-8") as fh:
        cases = json.load(fh)["cases"]
    res = {b: [0.0, 0] for b in betas}
    for c in cases:
        words = re.findall(r"\w+", c["question"])
        if not words:
            continue
        q = " OR ".join('"%s"' % w for w in words)
        rows = db.execute("SELECT page, -bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 300", (q,)).fetchall()
        for b in betas:
            ranked = sorted(((s / (1 + b * math.log(count[p])), p) for p, s in rows), key=lambda x: -x[0])
            pages = []
            for _, p in ranked:
                if p not in pages:
                    pages.append(p)
                if len(pages) == 10:
                    break
            for i, p in enumerate(pages):
                if any(p == r or p.endswith("/" + r) for r in c["relevant"]):
                    res[b][0] += 1 / (i + 1)
                    res[b][1] += i < 5
                    break
    n = len(cases)
    print(name, " ".join("beta %g: MRR@10 %.3f hit@5 %.3f" % (b, res[b][0] / n, res[b][1] / n) for b in betas))


if __name__ == "__main__":
    main()
