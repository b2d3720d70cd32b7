#!/usr/bin/env python3
"""Throughput and latency of a running baton-serve: C concurrent clients, each sending one request after
another for S seconds, over REST (binary tensor data extension, or JSON) and gRPC (raw contents).

    baton serve --model-repository DIR --http-port 8000 --grpc-port 8001 --threads 1 &
    server/bench/bench_serve.py --model face --input-shape 1,192,192,3 --clients 1,2,4 --seconds 10

Needs numpy and grpcio + grpc_tools (the gRPC client is generated from server/proto/grpc_service.proto)."""
import argparse
import http.client
import json
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def rest_caller(host, port, model, name, x, as_json):
    if as_json:
        body = json.dumps({"inputs": [{"name": name, "shape": list(x.shape), "datatype": "FP32",
                                       "data": x.flatten().tolist()}]}).encode()
        headers = {"Content-Type": "application/json"}
    else:
        header = json.dumps({"inputs": [{"name": name, "shape": list(x.shape), "datatype": "FP32",
                                         "parameters": {"binary_data_size": x.nbytes}}],
                             "parameters": {"binary_data_output": True}}).encode()
        body = header + x.tobytes()
        headers = {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))}
    conn = http.client.HTTPConnection(host, port)  # one keep-alive connection per client

    def call():
        conn.request("POST", f"/v2/models/{model}/infer", body, headers)
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            raise RuntimeError(r.status)
    return call


def grpc_caller(host, port, model, name, x, pb, pbg):
    import grpc
    channel = grpc.insecure_channel(f"{host}:{port}")
    stub = pbg.GRPCInferenceServiceStub(channel)
    req = pb.ModelInferRequest(model_name=model)
    req.inputs.add(name=name, datatype="FP32", shape=list(x.shape))
    req.raw_input_contents.append(x.tobytes())
    return lambda: stub.ModelInfer(req)


def run(make_call, clients, seconds):
    latencies = [[] for _ in range(clients)]
    failures = [0]
    stop = time.monotonic() + seconds

    def client(k):
        call = make_call()
        call()  # warm-up, not counted
        while time.monotonic() < stop:
            t = time.perf_counter()
            try:
                call()
            except Exception:
                failures[0] += 1
                continue
            latencies[k].append(time.perf_counter() - t)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    all_ms = np.array([x for lat in latencies for x in lat]) * 1000
    return len(all_ms) / elapsed, np.percentile(all_ms, 50), np.percentile(all_ms, 99), failures[0]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--http-port", type=int, default=8000)
    p.add_argument("--grpc-port", type=int, default=8001)
    p.add_argument("--model", required=True)
    p.add_argument("--input-shape", required=True, help="e.g. 1,192,192,3 (the model's one FP32 input)")
    p.add_argument("--input-name", default="input", help="the input's name (default: input)")
    p.add_argument("--clients", default="1,2,4")
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--protocols", default="rest,rest-json,grpc")
    a = p.parse_args()
    x = np.random.default_rng(0).uniform(-1, 1, [int(d) for d in a.input_shape.split(",")]).astype(np.float32)
    out = tempfile.mkdtemp()
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{HERE.parent / 'proto'}", f"--python_out={out}",
                    f"--grpc_python_out={out}", str(HERE.parent / "proto" / "grpc_service.proto")], check=True)
    sys.path.insert(0, out)
    import grpc_service_pb2 as pb
    import grpc_service_pb2_grpc as pbg
    makers = {
        "rest": lambda: rest_caller(a.host, a.http_port, a.model, a.input_name, x, False),
        "rest-json": lambda: rest_caller(a.host, a.http_port, a.model, a.input_name, x, True),
        "grpc": lambda: grpc_caller(a.host, a.grpc_port, a.model, a.input_name, x, pb, pbg),
    }
    print(f"{'protocol':10} {'clients':>7} {'inf/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'failed':>6}")
    for proto in a.protocols.split(","):
        for c in [int(n) for n in a.clients.split(",")]:
            rate, p50, p99, failed = run(makers[proto], c, a.seconds)
            print(f"{proto:10} {c:7d} {rate:8.1f} {p50:8.2f} {p99:8.2f} {failed:6d}", flush=True)


if __name__ == "__main__":
    main()
