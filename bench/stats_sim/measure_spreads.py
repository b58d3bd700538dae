#!/usr/bin/env python3
"""The noise figures bench/stats_sim/sim.h's constants were taken from.

Reads the runs of record in docs/results/frameworks-*.json (format benchlab-run-of-record,
version 1) and prints, for req/s ("rps") and CPU per request ("cpu_us_per_request"):

  ratio_sd   pooled sample SD of ln(target_r / baseline_r) over the rounds of every
             (cell, target) pair of every campaign: sum((n-1) s^2) / sum(n-1), s over a pair's
             rounds. One window's log-scale SD is ratio_sd / sqrt(2) (the two windows of a round
             independent, equal spread).
  ratio_sd_median   the median of the pairs' s (robust to the few pairs an outlier round blew up).
  noise_sd   pooled SD of ln(value) over each campaign's noise windows (the baseline's /json
             cell measured 5 times through the campaign: between-window spread plus drift).
  drift_per_round   the slope, per round, of ln(value) minus its (cell, target) mean over the
             rounds, fitted over every valid window (least squares, pooled).
  drift_per_round_position   the slope of the same residual against the window's position in
             its round, scaled to one whole round (first window to last).

Usage: bench/stats_sim/measure_spreads.py [docs/results]
"""
import glob
import json
import math
import os
import statistics
import sys

METRICS = ("rps", "cpu_us_per_request")


def valid_attempt(window):
    for a in window["attempts"]:
        if a.get("newest") and a.get("verdict") == "valid":
            return a
    return None


def slope(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "docs/results"
    files = sorted(glob.glob(os.path.join(root, "frameworks-*.json")))
    for metric in METRICS:
        ss = df = 0.0
        pair_sds = []
        noise_ss = noise_df = 0.0
        round_x, round_y, pos_x, pos_y = [], [], [], []
        for path in files:
            run = json.load(open(path))
            for cell in run["cells"]:
                for t in cell["targets"]:
                    vs = t["metrics"].get(metric, {}).get("vs_baseline", {})
                    logs = [math.log(r["ratio"]) for r in vs.get("rounds", [])
                            if r.get("ratio") and r["ratio"] > 0]
                    if len(logs) >= 2:
                        s2 = statistics.variance(logs)
                        ss += (len(logs) - 1) * s2
                        df += len(logs) - 1
                        pair_sds.append(math.sqrt(s2))
            noise = [valid_attempt(w) for w in run["windows"] if w["noise"]]
            nl = [math.log(a[metric]) for a in noise if a and a.get(metric)]
            if len(nl) >= 2:
                noise_ss += (len(nl) - 1) * statistics.variance(nl)
                noise_df += len(nl) - 1
            # Drift: residuals of ln(value) from the (cell, target) mean over the rounds.
            groups = {}
            per_round = {}
            for w in run["windows"]:
                a = valid_attempt(w)
                if w["noise"] or not a or not a.get(metric):
                    continue
                key = (w["pair"], w["target"], w["scenario"], w["load_level"])
                groups.setdefault(key, []).append((w["round"], w["position"], math.log(a[metric])))
                per_round[w["round"]] = max(per_round.get(w["round"], 0), w["position"] + 1)
            for rows in groups.values():
                if len(rows) < 2:
                    continue
                m = statistics.fmean(v for _, _, v in rows)
                for rnd, pos, v in rows:
                    round_x.append(rnd)
                    round_y.append(v - m)
                    pos_x.append(pos / max(1, per_round[rnd] - 1))
                    pos_y.append(v - m)
        print(f"{metric}: files={len(files)} pairs={len(pair_sds)} df={df:.0f}")
        print(f"  ratio_sd={math.sqrt(ss / df):.4f} window_sd={math.sqrt(ss / df / 2):.4f}"
              f" ratio_sd_median={statistics.median(pair_sds):.4f}")
        print(f"  noise_sd={math.sqrt(noise_ss / noise_df):.4f} (df={noise_df:.0f})")
        print(f"  drift_per_round={slope(round_x, round_y):+.4f}"
              f" drift_per_round_position={slope(pos_x, pos_y):+.4f} (windows={len(round_x)})")


if __name__ == "__main__":
    main()
