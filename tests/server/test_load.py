"""Load on baton-serve: 32 concurrent REST clients on loopback for BATON_LOAD_SECONDS (60 by default; the
run stops by itself), each sending the binary tensor data extension's request over a kept-alive
connection, outputs binary too. No request may fail, and the server's RSS may not grow between the 10th second and the end;
p50, p99 and throughput are printed. Then the same load on a model whose isolated delegate segfaults
on one invoke in a hundred: every request is still answered."""
import http.client
import os
import threading
import time

from conftest import Server, crashdeleg_server, http as http_request, make_repository, model_inputs
from test_rest import binary_request

FACE = "face_detection_full_range"
CLIENTS = 32
SECONDS = float(os.environ.get("BATON_LOAD_SECONDS", "60"))


def run_load(server, path, body, headers, seconds):
    """Latencies (s) of the answered requests, the failures as (status, body), and RSS samples (t, KiB)."""
    latencies, failures, rss = [], [], []
    lock = threading.Lock()
    start = time.monotonic()
    end = start + seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=60)
        mine, bad = [], []
        while time.monotonic() < end:
            t = time.monotonic()
            try:
                conn.request("POST", path, body, headers)
                r = conn.getresponse()
                data = r.read()
                if r.status == 200:
                    mine.append(time.monotonic() - t)
                else:
                    bad.append((r.status, data[:300]))
            except (OSError, http.client.HTTPException) as e:
                bad.append((None, repr(e)))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=60)
        conn.close()
        with lock:
            latencies.extend(mine)
            failures.extend(bad)

    def sampler():
        while time.monotonic() < end:
            rss.append((time.monotonic() - start, server.rss_kib()))
            time.sleep(0.5)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)] + [threading.Thread(target=sampler)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 120)
    return sorted(latencies), failures, rss


def report(capsys, what, latencies, seconds):
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3
    with capsys.disabled():
        print(f"\n{what}: {CLIENTS} clients, {seconds:.0f} s: {len(latencies)} requests, "
              f"{len(latencies) / seconds:.1f}/s, p50 {p(0.50):.2f} ms, p99 {p(0.99):.2f} ms")


def test_32_clients_for_a_minute_no_failure_and_a_flat_rss(tmp_path, capsys, monkeypatch):
    # Under AddressSanitizer freed memory waits in a quarantine (256 MB by default) before it is reused, so
    # the RSS of a server built with it grows until that is full: at a few requests a second, past the 10th
    # second. A small quarantine fills in the first seconds; a binary built without ASan ignores the option.
    asan = os.environ.get("ASAN_OPTIONS", "")
    monkeypatch.setenv("ASAN_OPTIONS", (asan + ":" if asan else "") + "quarantine_size_mb=16")
    repository = make_repository(tmp_path / "models", {"face": ({1: FACE}, None)})
    s = Server(repository, tmp_path)
    body, headers = binary_request(model_inputs(FACE), all_binary=True)
    try:
        latencies, failures, rss = run_load(s, "/v2/models/face/infer", body, headers, SECONDS)
    finally:
        code, _, err = s.terminate()
    assert code == 0, err
    assert not failures, failures[:5]
    assert latencies
    report(capsys, "load", latencies, SECONDS)
    settled = [k for t, k in rss if t >= SECONDS / 6]  # from the 10th second of a minute
    with capsys.disabled():
        print(f"load: RSS {settled[0] / 1024:.1f} MiB at {SECONDS / 6:.0f} s, {settled[-1] / 1024:.1f} MiB at the end, "
              f"at most {max(settled) / 1024:.1f} MiB")
    assert max(settled) - settled[0] < max(16 * 1024, settled[0] // 10), rss


def test_an_isolated_delegate_crashing_on_one_invoke_in_a_hundred_costs_no_request(tmp_path, capsys):
    s = crashdeleg_server(tmp_path, "fail = segv-invoke\nfail-every = 100\n")
    body, headers = binary_request(model_inputs(FACE), all_binary=True)
    seconds = max(5.0, SECONDS / 4)
    try:
        latencies, failures, _ = run_load(s, "/v2/models/face/infer", body, headers, seconds)
        metrics = http_request("GET", s.base + "/metrics")[2].decode()
    finally:
        code, _, err = s.terminate()
    assert code == 0, err
    assert not failures, failures[:5]
    deaths = [line for line in metrics.splitlines() if line.startswith('baton_plugin_deaths_total{plugin="crashdeleg"}')]
    assert deaths and float(deaths[0].split()[1]) >= 1, metrics
    report(capsys, f"load, crashdeleg dying ({deaths[0].split()[1]} deaths)", latencies, seconds)
