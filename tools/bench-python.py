#!/usr/bin/python3
"""bench-python.py - what baton.Interpreter.invoke() costs over `baton bench`: both time invoke alone,
inputs written once, the same model, plugins, delegate chain and threads, alternating for several rounds.
A developer tool, not a test.

usage: PYTHONPATH=build/runtime/python tools/bench-python.py [--runs N] [--rounds N] [--threads N]
                                                             [--plugin-dir DIR]... MODEL.tflite
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import time

import numpy as np

import baton

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--runs", type=int, default=2000)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--plugin-dir", action="append", default=[])
parser.add_argument("--baton", default=str(pathlib.Path(__file__).resolve().parent.parent / "build/tools/baton/baton"))
args = parser.parse_args()


def python_round():
    interp = baton.Interpreter(model_path=args.model, num_threads=args.threads, plugin_dirs=args.plugin_dir)
    rng = np.random.default_rng(0)
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]))
    invoke, clock = interp.invoke, time.perf_counter_ns
    for _ in range(100):
        invoke()
    times = []
    for _ in range(args.runs):
        t = clock()
        invoke()
        times.append(clock() - t)
    return min(times) / 1e3, statistics.median(times) / 1e3, interp.plan()["totals"]["per_plugin"]


def tool_round():
    cmd = [args.baton, "bench", args.model, "--runs", str(args.runs), "--warmup", "100", "--threads",
           str(args.threads), "--json"] + [f"--plugin-dir={d}" for d in args.plugin_dir]
    lat = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["latency_ms"]
    return lat["min"] * 1e3, lat["median"] * 1e3


py_min, py_med, tool_min, tool_med = [], [], [], []
for r in range(args.rounds):
    t = tool_round()
    p = python_round()
    tool_min.append(t[0]); tool_med.append(t[1]); py_min.append(p[0]); py_med.append(p[1])
    print(f"round {r + 1}: baton bench min {t[0]:.1f} us median {t[1]:.1f} us | python invoke() min {p[0]:.1f} us "
          f"median {p[1]:.1f} us | plan {p[2]}")
print(f"best of {args.rounds} rounds x {args.runs} runs: min {min(py_min) - min(tool_min):+.1f} us, "
      f"median {min(py_med) - min(tool_med):+.1f} us (python - baton bench)")
