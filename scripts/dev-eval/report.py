#!/usr/bin/env python3
"""Prints the dev evaluation table and chunk-quality counts.

Usage: report.py WORK SET [SET ...]

Reads WORK/<set>/ours.json (askyourdocs eval --json), WORK/<set>/baseline.json
(bm25.py) and the CLI's index WORK/<set>/index/askyourdocs.db (SQLite), and
prints one markdown table of the metrics (ours: vector, keyword, fusion;
BM25 baseline) and one of the chunk counts: navigation-bar chunks (text
with both "Prev" and "Next" links of a DocBook/texinfo nav bar, or
"Previous"/"Next" footers), chunks or breadcrumbs holding a permalink mark
(¶ or 🔗), and chunks under 200 characters on pages with more than one
chunk.
"""
import collections
import json
import re
import sqlite3
import sys

NAV = re.compile(r"(<<<\s*Prev|\bPrev\s*\|.*\b(Up|Home|Next)\b|\bPrev(ious)?\b[^\n]{0,80}\bNext\b|Skip to (main )?content|Next\s*:\s*\w.*Previous\s*:|Previous\s*:\s*\w.*Up\s*:)", re.S)
MARK = re.compile("[¶🔗]")


def chunk_stats(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    # The text column: since schema 7 the document JSON leaves the text out.
    stored = [(text, json.loads(doc)) for (text, doc) in con.execute("SELECT text, doc FROM chunks ORDER BY rid")]
    con.close()
    pages = collections.Counter()
    docs = []
    for text, d in stored:
        meta = d.get("metadata") or {}
        docs.append((text, meta))
        pages[meta.get("url")] += 1
    nav = sum(1 for t, _ in docs if NAV.search(t))
    marks = sum(1 for t, m in docs if MARK.search(t) or MARK.search(str(m.get("breadcrumb", ""))))
    short = sum(1 for t, m in docs if len(t) < 200 and pages[m.get("url")] > 1)
    return len(docs), len(pages), nav, marks, short


def main():
    work, names = sys.argv[1], sys.argv[2:]
    rows, quality = [], []
    for s in names:
        with open(f"{work}/{s}/ours.json") as fh:
            ours = json.load(fh)
        with open(f"{work}/{s}/baseline.json") as fh:
            base = json.load(fh)
        label = f"{s} ({ours['cases']} q)"
        for r in ours["results"]:
            m = r["metrics"]
            rows.append((label, "ours: " + r["mode"], m["HitAt1"], m["HitAt5"], m["MRRAt10"], m["NDCGAt10"], m["MeanLatency"] / 1e6))
            label = ""
        m = base["metrics"]
        name = "BM25 baseline (FTS5, CJK bigrams, unstemmed)" if base["mode"] == "bm25-fts5-cjk" else "BM25 baseline (FTS5)"
        rows.append(("", name, m["hitAt1"], m["hitAt5"], m["mrrAt10"], m["ndcgAt10"], None))
        quality.append((s,) + chunk_stats(f"{work}/{s}/index/askyourdocs.db") + (base["pieces"],))
    print("| set | retriever | hit@1 | hit@5 | MRR@10 | nDCG@10 | mean ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        lat = "" if r[6] is None else f"{r[6]:.1f}"
        print(f"| {r[0]} | {r[1]} | {r[2]:.3f} | {r[3]:.3f} | {r[4]:.3f} | {r[5]:.3f} | {lat} |")
    print()
    print("| set | chunks | pages | nav-bar chunks | ¶/🔗 marks | chunks < 200 chars | baseline sections |")
    print("|---|---|---|---|---|---|---|")
    for q in quality:
        print("| %s | %d | %d | %d | %d | %d | %d |" % q)


if __name__ == "__main__":
    main()
