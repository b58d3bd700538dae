#!/usr/bin/env python3
"""Summarizes campaigns of bench/verdicts/run.sh from their database.

    summarize.py DB CAMPAIGN [DB CAMPAIGN]

For each campaign: per cell, the rounds it took and why it stopped, and per target the verdict
and the interval of each figure the plan decides on (report JSON, docs/report.md). Then the
self-test gate: the windows it refused, what the configured threshold alone would have refused
of the same windows (|selftest_drift| above selftest_drift_max_pct), and how far the refused
windows' req/s lay from their cell's median of valid windows, against the valid windows' own
distance. Given two campaigns of the same matrix (a fixed plan, then an adaptive one) it also
compares their verdicts comparison by comparison, and their window counts.
"""
import json
import sqlite3
import statistics
import subprocess
import sys

BENCHLAB = "build/bin/benchlab"


def report(db, name):
    out = subprocess.run([BENCHLAB, "report", "--db", db, name, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def verdicts(rep):
    """{(cell, target, figure): (verdict, text)} for every figure the plan decides on."""
    figures = rep["stats"]["decide_on"]
    found = {}
    for cell in rep["cells"]:
        key = f"{cell['pair'] + ' ' if cell['pair'] else ''}{cell['scenario']} {cell['load_level']}"
        for t in cell["targets"]:
            if t["baseline"]:
                continue
            for f in figures:
                vs = t["metrics"][f]["vs_baseline"]
                iv = vs["interval"]
                text = vs["verdict"]
                if iv:
                    text += f" {iv['estimate']:.3f} ({iv['low']:.3f}-{iv['high']:.3f}, n={iv['n']})"
                if vs["rounds_needed"]:
                    text += f", ~{vs['rounds_needed']} rounds"
                found[(key, t["target"], f)] = (vs["verdict"], text)
    return found


def print_campaign(db, name, rep):
    print(f"== {name}: {rep['stats']['plan']} plan, margin {rep['stats']['margin']}, "
          f"confidence {rep['stats']['confidence']}")
    for cell in rep["cells"]:
        print(f"  {cell['scenario']} {cell['load_level']}: {cell['rounds']} rounds, "
              f"{cell['stopped'] or 'fixed plan'}")
    for (cell, target, figure), (_, text) in sorted(verdicts(rep).items()):
        print(f"    {cell:14} {target:10} {figure:20} {text}")
    gate(db, name, rep)


def gate(db, name, rep):
    con = sqlite3.connect(db)
    rows = con.execute(
        "select w.target, w.scenario, w.connections, w.verdict, w.reasons, w.rps, "
        "w.selftest_drift from windows w join campaigns c on c.id = w.campaign_id "
        "where c.name = ?", (name,)).fetchall()
    configured = 10.0
    for cal in rep.get("selftest_calibrations", []):
        if cal["threshold_source"] == "configured":
            configured = cal["threshold_pct"]
    cals = ", ".join(f"{c['agent']}: spread {100 * c['spread']:.1f}% -> {c['threshold_pct']:.1f}% "
                     f"({c['threshold_source']})" for c in rep.get("selftest_calibrations", []))
    refused = [r for r in rows if "selftest_drift" in r[4]]
    alone = [r for r in rows if r[6] is not None and abs(r[6]) * 100 > configured]
    print(f"  windows {len(rows)}, valid {sum(r[3] == 'valid' for r in rows)}; self-test "
          f"calibration: {cals or 'none'}")
    print(f"  refused by selftest_drift: {len(refused)}/{len(rows)} "
          f"({100 * len(refused) / max(1, len(rows)):.1f}%); the configured {configured:g}% alone "
          f"would refuse {len(alone)} ({100 * len(alone) / max(1, len(rows)):.1f}%)")
    medians = {}
    for t, s, c, v, _, rps, _ in rows:
        if v == "valid":
            medians.setdefault((t, s, c), []).append(rps)
    medians = {k: statistics.median(v) for k, v in medians.items()}
    def distance(subset):
        d = [abs(r[5] / medians[r[:3]] - 1) for r in subset if r[:3] in medians]
        return f"median {100 * statistics.median(d):.1f}%" if d else "none"
    valid = [r for r in rows if r[3] == "valid"]
    passed = [r for r in valid if r[6] is not None and abs(r[6]) * 100 > 10]
    print(f"  req/s distance from the cell's valid median: valid windows {distance(valid)}, "
          f"refused by selftest_drift {distance(refused)}; valid with |drift| over 10%: "
          f"{len(passed)}, {distance(passed)}")


def compare(fixed, adaptive):
    a, b = verdicts(fixed), verdicts(adaptive)
    decided = [k for k, (v, _) in a.items() if v in ("ahead", "behind", "close")]
    same = [k for k in decided if b.get(k, ("",))[0] == a[k][0]]
    print(f"== adaptive against fixed: of {len(a)} comparisons the fixed plan decided "
          f"{len(decided)}; the adaptive plan reached the same verdict on {len(same)}")
    for k in decided:
        if k not in same:
            print(f"    differs: {k}: fixed {a[k][1]}; adaptive {b.get(k, ('', 'missing'))[1]}")
    wa = sum(t["windows"] for c in fixed["cells"] for t in c["targets"])
    wb = sum(t["windows"] for c in adaptive["cells"] for t in c["targets"])
    print(f"  matrix windows: fixed {wa}, adaptive {wb} ({100 * wb / max(1, wa):.0f}% of fixed)")


def main():
    args = sys.argv[1:]
    if len(args) not in (2, 4):
        sys.exit(__doc__)
    runs = list(zip(args[0::2], args[1::2]))
    reps = [report(db, name) for db, name in runs]
    for (db, name), rep in zip(runs, reps):
        print_campaign(db, name, rep)
    if len(reps) == 2:
        compare(*reps)


main()
