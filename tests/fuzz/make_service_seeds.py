#!/usr/bin/env python3
"""Writes the seed corpora of the service fuzz targets (docs/fuzzing.md) from readable specs.

Usage: tests/fuzz/make_service_seeds.py   (from anywhere; needs protoc, from protobuf-compiler)

Each tests/fuzz/seeds/TARGET.txt holds inputs separated by "== NAME" lines; every other
non-blank, non-comment line is one call, "Rpc: TEXT", where TEXT is the request message in
protobuf's text format on one line. In TEXT, @file(PATH) stands for the quoted contents of PATH
(relative to the repository). The pseudo-RPC SinkResponse of agent_service takes a Python bytes
literal's body instead ("HTTP/1.1 200 OK\\r\\n..."). Each input is written in the targets'
input format (tests/fuzz/service_input.h: per call, the selector byte, the message's length in
2 bytes, little-endian, and the message, encoded by protoc) to tests/fuzz/corpus/TARGET/seed-NAME,
or, when NAME is "regressions/WHAT", to tests/fuzz/regressions/TARGET/WHAT: an input that must
not fail (docs/fuzzing.md).
"""
import ast
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Selector and request type of each RPC, in the order of the enum Rpc of each target's .cc.
TARGETS = {
    "agent_service": [
        ("DescribeHost", "DescribeHostRequest"),
        ("StartTarget", "StartTargetRequest"),
        ("StopTarget", "StopTargetRequest"),
        ("CheckConformance", "CheckConformanceRequest"),
        ("RunLoad", "RunLoadRequest"),
        ("Mark", "MarkRequest"),
        ("CheckHost", "CheckHostRequest"),
        ("Acknowledge", "AcknowledgeRequest"),
        ("EndCampaign", "EndCampaignRequest"),
        ("SinkResponse", None),
        ("ListCommits", "ListCommitsRequest"),
    ],
    "coordinator_service": [
        ("RegisterAgent", "RegisterAgentRequest"),
        ("Heartbeat", "HeartbeatRequest"),
        ("OfferResults", "OfferResultsRequest"),
        ("ListAgents", "ListAgentsRequest"),
        ("SubmitCampaign", "SubmitCampaignRequest"),
        ("ListCampaigns", "ListCampaignsRequest"),
        ("WatchCampaign", "WatchCampaignRequest"),
        ("ListWindows", "ListWindowsRequest"),
        ("RerunWindows", "RerunWindowsRequest"),
        ("CancelCampaign", "CancelCampaignRequest"),
        ("GetReport", "GetReportRequest"),
        ("RemeasureSeries", "RemeasureSeriesRequest"),
        ("CheckCampaign", "SubmitCampaignRequest"),
        ("GetHistory", "GetHistoryRequest"),
        ("GetRegressions", "GetRegressionsRequest"),
        ("GetAudit", "GetAuditRequest"),
        ("StartBisection", "StartBisectionRequest"),
        ("GetBisection", "GetBisectionRequest"),
    ],
}


def quote_file(match):
    data = (ROOT / match.group(1)).read_bytes()
    escaped = "".join(
        chr(b) if 32 <= b < 127 and b not in (34, 92) else "\\%03o" % b for b in data)
    return '"' + escaped + '"'


def encode(message_type, text):
    text = re.sub(r"@file\(([^)]+)\)", quote_file, text)
    protos = sorted(str(p) for p in (ROOT / "proto/benchlab/v1").glob("*.proto"))
    return subprocess.run(
        ["protoc", "-I", str(ROOT / "proto"), "--encode=benchlab.v1." + message_type, *protos],
        input=text.encode(), capture_output=True, check=True).stdout


def parse_specs(path):
    seeds, name = {}, None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("== "):
            name = line[3:].strip()
            seeds[name] = []
        elif name is None:
            sys.exit(f"{path}:{number}: a call before the first '== NAME' line")
        else:
            rpc, _, text = line.partition(":")
            seeds[name].append((number, rpc.strip(), text.strip()))
    return seeds


def main():
    for target, rpcs in TARGETS.items():
        spec = ROOT / "tests/fuzz/seeds" / (target + ".txt")
        out = ROOT / "tests/fuzz/corpus" / target
        regressions = ROOT / "tests/fuzz/regressions" / target
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("seed-*"):
            old.unlink()
        selectors = {name: (i, t) for i, (name, t) in enumerate(rpcs)}
        for seed, calls in parse_specs(spec).items():
            data = b""
            for number, rpc, text in calls:
                if rpc not in selectors:
                    sys.exit(f"{spec}:{number}: {target} has no RPC {rpc}")
                selector, message_type = selectors[rpc]
                if message_type is None:
                    message = ast.literal_eval("b" + text)
                else:
                    message = encode(message_type, text)
                if len(message) > 0xFFFF:
                    sys.exit(f"{spec}:{number}: a message of {len(message)} bytes")
                data += bytes([selector]) + len(message).to_bytes(2, "little") + message
            if seed.startswith("regressions/"):
                regressions.mkdir(parents=True, exist_ok=True)
                (regressions / seed[len("regressions/"):]).write_bytes(data)
            else:
                (out / ("seed-" + seed)).write_bytes(data)
        print(f"{target}: {len(list(out.glob('seed-*')))} seeds in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
