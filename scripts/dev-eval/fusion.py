#!/usr/bin/env python3
"""Compares fusion settings offline on the ranked lists scripts/dev-eval/lists dumps.

Usage: fusion.py WORK SET [SET ...]

Reads WORK/<set>/lists.jsonl and prints, per set, hit@1, hit@5, MRR@10 and
nDCG@10 of vector alone, keyword alone and weighted reciprocal rank fusion
(ReciprocalRankFusion's formula: sum of weight / (k + rank + 1), documents
deduplicated by text, ties by best rank then list order) for a grid of
k, vector weight and keyword weight, each ranking cut to the CLI's depth and
scored over distinct pages as the CLI's eval does; then the settings that
keep fusion >= max(vector, keyword) on every set, best mean MRR@10 first.
"""
import itertools
import json
import math
import sys


def key(url, relevant):
    for r in relevant:
        if url == r or url.endswith("/" + r.lstrip("/")):
            return r
    return url


def metrics(ranked, relevant):
    seen, top = set(), []
    for r in ranked:
        if r not in seen:
            seen.add(r)
            top.append(r)
    top = top[:10]
    rr = next((1 / (i + 1) for i, r in enumerate(top) if r in relevant), 0.0)
    dcg = sum(1 / math.log2(i + 2) for i, r in enumerate(top) if r in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(set(relevant)))))
    return (1.0 if top[:1] and top[0] in relevant else 0.0,
            1.0 if any(r in relevant for r in top[:5]) else 0.0, rr, dcg / ideal if ideal else 0.0)


def fuse(lists, weights, k, depth):
    score, best = {}, {}
    for li, (entries, w) in enumerate(zip(lists, weights)):
        seen = set()
        for rank, (url, text) in enumerate(entries):
            if text in seen:
                continue
            seen.add(text)
            score[text] = score.get(text, 0.0) + w / (k + rank + 1)
            b = best.get(text)
            if b is None or (rank, li) < b[:2]:
                best[text] = (rank, li, url)
    order = sorted(score, key=lambda t: (-score[t], best[t][0], best[t][1]))
    return [best[t][2] for t in order[:depth]]


def evaluate(cases, f):
    tot = [0.0] * 4
    for c in cases:
        ranked = [key(u, c["relevant"]) for u in f(c)]
        for i, m in enumerate(metrics(ranked, c["relevant"])):
            tot[i] += m
    return [t / len(cases) for t in tot]


def main():
    work, sets = sys.argv[1], sys.argv[2:]
    depth = 40
    grid = [(k, wv, wk) for k in (2, 5, 10, 20, 60) for wv in (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0) for wk in (1.0,)]
    res = {}
    for s in sets:
        with open(f"{work}/{s}/lists.jsonl") as fh:
            cases = [json.loads(line) for line in fh]
        v = evaluate(cases, lambda c: [u for u, _ in c["vector"]][:depth])
        kw = evaluate(cases, lambda c: [u for u, _ in c["keyword"]][:depth])
        res[s] = {"vector": v, "keyword": kw}
        print(f"{s} ({len(cases)} cases)  hit@1 hit@5 MRR@10 nDCG@10")
        print(f"  vector          {v[0]:.3f} {v[1]:.3f} {v[2]:.3f} {v[3]:.3f}")
        print(f"  keyword         {kw[0]:.3f} {kw[1]:.3f} {kw[2]:.3f} {kw[3]:.3f}")
        for k, wv, wk in grid:
            m = evaluate(cases, lambda c: fuse([c["vector"][:depth], c["keyword"][:depth]], [wv, wk], k, depth))
            res[s][(k, wv, wk)] = m
            print(f"  k={k:<3} wv={wv:<4} wk={wk:<4} {m[0]:.3f} {m[1]:.3f} {m[2]:.3f} {m[3]:.3f}")
    print("settings with fusion >= max(vector, keyword) on hit@1, hit@5, MRR@10 in every set, by mean MRR@10:")
    ok = []
    for g in grid:
        if all(res[s][g][i] >= max(res[s]["vector"][i], res[s]["keyword"][i]) - 1e-12 for s in sets for i in range(3)):
            ok.append((sum(res[s][g][2] for s in sets) / len(sets), g))
    for mrr, g in sorted(ok, reverse=True)[:10]:
        print(f"  k={g[0]} wv={g[1]} wk={g[2]}: mean MRR@10 {mrr:.4f}")
    if not ok:
        print("  none")


if __name__ == "__main__":
    main()
