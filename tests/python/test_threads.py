"""Interpreters in Python threads: invoke releases the GIL, so two of them run at the same time and each
still gets its own right answer."""
import sys
import threading
import time

import numpy as np
import pytest

import baton
from conftest import BUILTIN_DIR, MODELS_DIR

ROWS = 1 << 18  # x and y [ROWS, 4] float32: about a millisecond per ADD


def big_add(seed):
    interp = baton.Interpreter(str(MODELS_DIR / "add_signatures.tflite"), plugin_dirs=[BUILTIN_DIR],
                               no_delegates=True, num_threads=1)
    x, y = (d["index"] for d in interp.get_input_details())
    interp.resize_tensor_input(x, [ROWS, 4])
    interp.resize_tensor_input(y, [ROWS, 4])
    interp.allocate_tensors()
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((ROWS, 4), dtype=np.float32)
    b = rng.standard_normal((ROWS, 4), dtype=np.float32)
    interp.set_tensor(x, a)
    interp.set_tensor(y, b)
    return interp, np.maximum(a + b, 0)


@pytest.fixture
def slow_gil_switches():
    # With the GIL held, another thread would get it only every second: any overlap below comes from
    # invoke releasing it.
    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    yield
    sys.setswitchinterval(old)


def test_two_interpreters_overlap_and_stay_correct(slow_gil_switches):
    runs = 25
    work = [big_add(1), big_add(2)]
    intervals = [[], []]
    errors = []
    start = threading.Barrier(2)

    def loop(k):
        interp, want = work[k]
        out = interp.get_output_details()[0]["index"]
        start.wait()
        for _ in range(runs):
            t0 = time.perf_counter()
            interp.invoke()
            intervals[k].append((t0, time.perf_counter()))
            if not np.array_equal(interp.get_tensor(out), want):
                errors.append(f"thread {k}: wrong output")

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(intervals[0]) == len(intervals[1]) == runs
    overlapping = sum(1 for a0, a1 in intervals[0] for b0, b1 in intervals[1] if a0 < b1 and b0 < a1)
    assert overlapping >= 3, f"only {overlapping} overlapping invokes: is the GIL released?"


def test_python_runs_while_invoke_runs(slow_gil_switches):
    interp, want = big_add(3)
    done = threading.Event()
    samples = []

    def sampler():
        while not done.is_set():
            samples.append(time.perf_counter())
            time.sleep(0)  # lets the invoking thread have the GIL back at once

    t = threading.Thread(target=sampler)
    t.start()
    intervals = []
    try:
        for _ in range(20):
            t0 = time.perf_counter()
            interp.invoke()
            intervals.append((t0, time.perf_counter()))
    finally:
        done.set()
        t.join()
    inside = [s for s in samples if any(a < s < b for a, b in intervals)]
    assert len(inside) >= 3, f"{len(inside)} Python steps of another thread during 20 invokes"
    np.testing.assert_array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]), want)


def test_one_interpreter_refuses_a_second_thread(slow_gil_switches):
    interp, _ = big_add(4)
    failures = []
    started = threading.Event()

    def invoker():
        started.set()
        for _ in range(50):
            interp.invoke()

    t = threading.Thread(target=invoker)
    t.start()
    started.wait()
    deadline = time.perf_counter() + 5
    while t.is_alive() and time.perf_counter() < deadline:
        try:
            interp.get_input_details()
        except RuntimeError as e:
            failures.append(str(e))
            break
        time.sleep(0)
    t.join()
    assert failures and "another thread is using this interpreter" in failures[0]
