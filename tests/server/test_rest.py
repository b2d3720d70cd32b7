"""baton-serve over REST, as the Open Inference Protocol's JSON and its binary tensor data extension
define it, through urllib, http.client and raw sockets."""
import concurrent.futures
import json
import pathlib
import socket
import struct
import subprocess
import time

import numpy as np
import pytest

from conftest import (MODELS, SERVE_EXE, Server, baton_run, clean_env, http, infer_doc, json_outputs,
                      make_repository, model_inputs, post_json, real_model)


def test_health_and_server_metadata(server):
    status, _, body = http("GET", server.base + "/v2/health/live")
    assert status == 200 and body == b""
    status, _, body = http("GET", server.base + "/v2/health/ready")
    assert status == 200 and body == b""
    status, headers, body = http("GET", server.base + "/v2")
    assert status == 200 and headers["Content-Type"] == "application/json"
    meta = json.loads(body)
    assert meta["name"] == "baton" and meta["version"]
    assert "binary_tensor_data" in meta["extensions"]


def inspect(cached):
    return json.loads(subprocess.run([__import__("conftest").BATON_EXE, "inspect", str(real_model(cached)), "--json"],
                                     capture_output=True, text=True, check=True).stdout)


@pytest.mark.parametrize("name", ["face", "ssd", "two"])
def test_model_metadata_names_datatypes_and_shapes(server, name):
    versions = MODELS[name][0]
    status, _, body = http("GET", f"{server.base}/v2/models/{name}")
    assert status == 200, body
    meta = json.loads(body)
    assert meta["name"] == name
    assert meta["versions"] == [str(v) for v in sorted(versions)]
    assert meta["platform"]
    info = inspect(versions[max(versions)])
    protocol = {"FLOAT32": "FP32", "UINT8": "UINT8"}
    assert [i["name"] for i in meta["inputs"]] == [i["name"] for i in info["inputs"]]
    assert [i["datatype"] for i in meta["inputs"]] == [protocol[i["type"]] for i in info["inputs"]]
    assert [i["shape"] for i in meta["inputs"]] == [i["shape"] for i in info["inputs"]]
    assert [o["name"] for o in meta["outputs"]] == [o["name"] for o in info["outputs"]]
    for version in versions:
        status, _, body = http("GET", f"{server.base}/v2/models/{name}/versions/{version}")
        assert status == 200 and json.loads(body)["name"] == name
        status, _, body = http("GET", f"{server.base}/v2/models/{name}/versions/{version}/ready")
        assert status == 200
    assert http("GET", f"{server.base}/v2/models/{name}/ready")[0] == 200


def test_dynamic_dimensions_are_minus_one(server):
    # The SSD post-processing outputs' shapes are known only when it runs: the model declares them -1.
    meta = json.loads(http("GET", f"{server.base}/v2/models/ssd")[2])
    assert all(d == -1 for o in meta["outputs"] for d in o["shape"]), meta["outputs"]
    assert all(d > 0 for i in meta["inputs"] for d in i["shape"])


def test_unknown_model_and_version_are_404_naming_them(server):
    status, _, body = http("GET", f"{server.base}/v2/models/nosuch")
    assert status == 404 and "nosuch" in json.loads(body)["error"]
    status, _, body = http("GET", f"{server.base}/v2/models/nosuch/ready")
    assert status == 404
    status, _, body = http("GET", f"{server.base}/v2/models/two/versions/7")
    assert status == 404 and "'7'" in json.loads(body)["error"]
    status, _, body = post_json(f"{server.base}/v2/models/nosuch/infer", {"inputs": []})
    assert status == 404 and "nosuch" in json.loads(body)["error"]
    status, _, body = http("GET", f"{server.base}/v2/nothing/here")
    assert status == 404 and "error" in json.loads(body)


@pytest.mark.parametrize("name", ["face", "ssd", "two"])
def test_infer_json_equals_baton_run(server, tmp_path, name):
    versions = MODELS[name][0]
    cached = versions[max(versions)]
    arrays = model_inputs(cached)
    expected = baton_run(cached, arrays, tmp_path)
    status, headers, body = post_json(f"{server.base}/v2/models/{name}/infer", infer_doc(arrays))
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    doc, outputs = json_outputs(body)
    assert doc["model_name"] == name and doc["model_version"] == str(max(versions)) and doc["id"] == "req-1"
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_infer_by_version_runs_that_version(server, tmp_path):
    for version, cached in MODELS["two"][0].items():
        arrays = model_inputs(cached, seed=version)
        expected = baton_run(cached, arrays, tmp_path / str(version))
        status, _, body = post_json(f"{server.base}/v2/models/two/versions/{version}/infer", infer_doc(arrays))
        assert status == 200, body
        doc, outputs = json_outputs(body)
        assert doc["model_version"] == str(version)
        for got, want in zip(outputs, expected):
            np.testing.assert_array_equal(got, want)
    # The two versions differ (float and dynamic-range weights), so a request that ran the wrong one fails.
    arrays = model_inputs("model_1", seed=5)
    a = json_outputs(post_json(f"{server.base}/v2/models/two/versions/1/infer", infer_doc(arrays))[2])[1]
    b = json_outputs(post_json(f"{server.base}/v2/models/two/versions/2/infer", infer_doc(arrays))[2])[1]
    assert any(not np.array_equal(x, y) for x, y in zip(a, b))


def test_nested_data_is_row_major(server, tmp_path):
    arrays = model_inputs("face_detection_full_range", seed=3)
    doc = infer_doc(arrays)
    doc["inputs"][0]["data"] = arrays[0][1].tolist()  # nested lists, as the protocol allows
    status, _, body = post_json(f"{server.base}/v2/models/face/infer", doc)
    assert status == 200, body
    expected = baton_run("face_detection_full_range", arrays, tmp_path)
    for got, want in zip(json_outputs(body)[1], expected):
        np.testing.assert_array_equal(got, want)


def binary_request(arrays, outputs=None, all_binary=False):
    """The binary tensor data extension: JSON header, then each input's bytes."""
    doc = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": __import__("conftest").DATATYPE[a.dtype],
                       "parameters": {"binary_data_size": a.nbytes}} for n, a in arrays]}
    if outputs is not None:
        doc["outputs"] = outputs
    if all_binary:
        doc["parameters"] = {"binary_data_output": True}
    header = json.dumps(doc).encode()
    body = header + b"".join(a.tobytes() for _, a in arrays)
    return body, {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))}


def split_binary_response(headers, body):
    size = int(headers["Inference-Header-Content-Length"])
    doc = json.loads(body[:size])
    at = size
    outputs = {}
    for o in doc["outputs"]:
        dtype = __import__("conftest").NUMPY[o["datatype"]]
        if "data" in o:
            outputs[o["name"]] = np.array(o["data"], dtype=dtype).reshape(o["shape"])
            continue
        n = o["parameters"]["binary_data_size"]
        outputs[o["name"]] = np.frombuffer(body[at:at + n], dtype=dtype).reshape(o["shape"])
        at += n
    assert at == len(body)
    return doc, outputs


def test_binary_inputs_and_requested_binary_output(server, tmp_path):
    arrays = model_inputs("model_1", seed=7)
    expected = baton_run("model_1", arrays, tmp_path)
    meta = json.loads(http("GET", f"{server.base}/v2/models/two/versions/1")[2])
    second = meta["outputs"][1]["name"]
    body, headers = binary_request(arrays, outputs=[{"name": second, "parameters": {"binary_data": True}}])
    status, rheaders, rbody = http("POST", f"{server.base}/v2/models/two/versions/1/infer", body, headers)
    assert status == 200, rbody
    doc, outputs = split_binary_response(rheaders, rbody)
    assert [o["name"] for o in doc["outputs"]] == [second]  # only the requested output
    np.testing.assert_array_equal(outputs[second], expected[1])
    # All outputs binary; the uint8 model, binary in and out.
    arrays = model_inputs("mobilenet_ssd_v2_coco_quant_postprocess", seed=2)
    expected = baton_run("mobilenet_ssd_v2_coco_quant_postprocess", arrays, tmp_path / "ssd")
    body, headers = binary_request(arrays, all_binary=True)
    status, rheaders, rbody = http("POST", f"{server.base}/v2/models/ssd/infer", body, headers)
    assert status == 200, rbody
    doc, outputs = split_binary_response(rheaders, rbody)
    for o, want in zip(doc["outputs"], expected):
        np.testing.assert_array_equal(outputs[o["name"]], want)


def face_doc():
    return infer_doc(model_inputs("face_detection_full_range"))


def mutate(path, value):
    def apply(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return doc
    return apply


# (what is wrong, how to break a valid request, the status, words the error must hold)
BAD_REQUESTS = [
    ("wrong datatype", mutate(["inputs", 0, "datatype"], "FP64"), 400, ["'input'", "FP64", "FP32"]),
    ("unknown datatype", mutate(["inputs", 0, "datatype"], "FLOAT"), 400, ["'input'", "FLOAT"]),
    ("wrong shape", mutate(["inputs", 0, "shape"], [1, 96, 384, 3]), 400, ["'input'", "[1,96,384,3]", "[1,192,192,3]"]),
    ("wrong rank", mutate(["inputs", 0, "shape"], [192, 192, 3]), 400, ["'input'", "rank"]),
    ("element count", lambda d: (d["inputs"][0].__setitem__("data", d["inputs"][0]["data"][:-1]), d)[1], 400,
     ["'input'", "110592", "110591"]),
    ("not a number", lambda d: (d["inputs"][0]["data"].__setitem__(5, "x"), d)[1], 400, ["'input'", "element 5"]),
    ("unknown input", mutate(["inputs", 0, "name"], "image"), 400, ["'image'", "'input'"]),
    ("missing input", mutate(["inputs"], []), 400, ["'input'", "missing"]),
    ("no data", mutate(["inputs", 0, "data"], KeyError), 400, ["'input'", "data"]),
    ("unknown output", mutate(["outputs"], [{"name": "boxes"}]), 400, ["'boxes'"]),
    ("negative dimension", mutate(["inputs", 0, "shape"], [1, -192, 192, 3]), 400, ["'input'", "negative"]),
]


@pytest.mark.parametrize("what,breaks,status,words", BAD_REQUESTS, ids=[b[0] for b in BAD_REQUESTS])
def test_bad_request_is_refused_naming_the_input(server, what, breaks, status, words):
    got, headers, body = post_json(f"{server.base}/v2/models/face/infer", breaks(face_doc()))
    assert got == status, body
    assert headers["Content-Type"] == "application/json"
    error = json.loads(body)["error"]
    for w in words:
        assert w in error, (what, error)


def test_malformed_bodies_are_400(server):
    url = f"{server.base}/v2/models/face/infer"
    for body, words in [(b"{not json", "not valid JSON"), (b"[1, 2]", "JSON object"), (b"", "not valid JSON"),
                        (b'{"inputs": 3}', "inputs")]:
        status, _, rbody = http("POST", url, body, {"Content-Type": "application/json"})
        assert status == 400 and words in json.loads(rbody)["error"], rbody
    # Binary sizes that do not add up.
    arrays = model_inputs("face_detection_full_range")
    body, headers = binary_request(arrays)
    status, _, rbody = http("POST", url, body[:-4], headers)
    assert status == 400 and "'input'" in json.loads(rbody)["error"]
    status, _, rbody = http("POST", url, body + b"xxxx", headers)
    assert status == 400 and "4 bytes" in json.loads(rbody)["error"]
    headers["Inference-Header-Content-Length"] = str(len(body) + 1)
    status, _, rbody = http("POST", url, body, headers)
    assert status == 400 and "Inference-Header-Content-Length" in json.loads(rbody)["error"]
    # Wrong methods.
    assert http("GET", url)[0] == 405
    assert http("POST", f"{server.base}/v2/health/live", b"{}")[0] == 405


def raw_exchange(port, data, timeout=10):
    """Sends bytes on a fresh connection and returns what comes back until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def test_a_1gb_body_is_refused_before_it_is_read(server):
    rss_before = server.rss_kib()
    started = time.monotonic()
    header = (f"POST /v2/models/face/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Content-Length: {1 << 30}\r\n\r\n").encode()
    answer = raw_exchange(server.http_port, header + b'{"inputs": [')
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"1073741824" in answer
    assert time.monotonic() - started < 5
    assert server.rss_kib() - rss_before < 64 * 1024
    assert http("GET", server.base + "/v2/health/live")[0] == 200


def test_clients_that_disconnect_mid_request_cost_nothing(server, tmp_path):
    arrays = model_inputs("face_detection_full_range", seed=9)
    body = json.dumps(infer_doc(arrays)).encode()
    head = (f"POST /v2/models/face/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    for cut in (len(head) // 2, len(head) + len(body) // 2, len(head) + len(body)):
        # Half a header, half a body, and a whole request whose answer nobody reads.
        s = socket.create_connection(("127.0.0.1", server.http_port))
        s.sendall((head + body)[:cut])
        s.close()
    status, _, rbody = post_json(f"{server.base}/v2/models/face/infer", infer_doc(arrays))
    assert status == 200
    expected = baton_run("face_detection_full_range", arrays, tmp_path)
    for got, want in zip(json_outputs(rbody)[1], expected):
        np.testing.assert_array_equal(got, want)


def test_a_full_queue_answers_503_at_once(server):
    # `busy` has one interpreter and a queue of one: of many requests at once, some are refused.
    body, headers = binary_request(model_inputs("face_detection_full_range"))
    url = f"{server.base}/v2/models/busy/infer"
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda _: http("POST", url, body, headers), range(32)))
    statuses = [r[0] for r in results]
    assert set(statuses) <= {200, 503}, statuses
    assert 503 in statuses and 200 in statuses, statuses
    refused = [json.loads(r[2])["error"] for r in results if r[0] == 503]
    assert all("queue is full" in e and "'busy'" in e for e in refused), refused


def test_a_request_past_its_deadline_fails_with_504(server):
    body, headers = binary_request(model_inputs("face_detection_full_range"))
    status, _, rbody = http("POST", f"{server.base}/v2/models/late/infer", body, headers)
    assert status == 504, rbody
    assert "deadline" in json.loads(rbody)["error"]
    # The interpreter whose invoke was cancelled still serves: the same model without the deadline.
    assert http("POST", f"{server.base}/v2/models/face/infer", body, headers)[0] == 200


def test_metrics_count_requests_per_model(server):
    body, headers = binary_request(model_inputs("face_detection_full_range"))
    http("POST", f"{server.base}/v2/models/face/infer", body, headers)
    status, headers, text = http("GET", server.base + "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    values = {}
    for line in text.decode().splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            values[key] = float(value)
    assert values['baton_requests_total{model="face",version="1"}'] >= 1
    assert values['baton_request_duration_seconds_count{model="face",version="1"}'] >= 1
    assert 'baton_queue_depth{model="busy",version="1"}' in values
    assert values['baton_request_duration_seconds_bucket{model="face",version="1",le="+Inf"}'] == \
        values['baton_request_duration_seconds_count{model="face",version="1"}']


def run_serve(tmp_path, repository, *extra):
    return subprocess.run([SERVE_EXE, "--model-repository", str(repository), "--http-port", "0", "--grpc-port", "0",
                           *extra], capture_output=True, text=True, timeout=60, env=clean_env(tmp_path))


def test_repository_and_config_mistakes_name_the_file_line_and_key(tmp_path):
    repository = make_repository(tmp_path / "models", {"face": ({1: "face_detection_full_range"},
                                                               "instances = 1\n\nthreds = 2\n")})
    r = run_serve(tmp_path, repository)
    assert r.returncode == 1
    assert f"{repository}/face/config.ini:3: unknown key 'threds'" in r.stderr, r.stderr
    (repository / "face" / "config.ini").write_text("queue = lots\n")
    r = run_serve(tmp_path, repository)
    assert r.returncode == 1 and "config.ini:1: key 'queue' must be" in r.stderr, r.stderr
    (repository / "empty").mkdir()
    (repository / "face" / "config.ini").unlink()
    r = run_serve(tmp_path, repository)
    assert r.returncode == 1 and "empty has no version folder" in r.stderr, r.stderr
    r = run_serve(tmp_path, tmp_path / "nowhere")
    assert r.returncode == 1 and "is not a folder" in r.stderr
    r = run_serve(tmp_path, repository, "--http-port", "70000")
    assert r.returncode == 2 and "--http-port" in r.stderr


def test_help_names_the_endpoints_and_options():
    r = subprocess.run([SERVE_EXE, "--help"], capture_output=True, text=True, check=True)
    for word in ["--model-repository", "--http-port", "--grpc-port", "config.ini", "/v2/health/ready", "ModelInfer",
                 "SIGTERM", "503"]:
        assert word in r.stdout


def test_baton_serve_is_baton_serve():
    r = subprocess.run([__import__("conftest").BATON_EXE, "serve", "--help"], capture_output=True, text=True, check=True)
    assert "--model-repository" in r.stdout


def test_sigterm_answers_requests_in_flight_and_exits_0(tmp_path):
    repository = make_repository(tmp_path / "models", {"face": ({1: "face_detection_full_range"}, "instances = 1\n")})
    s = Server(repository, tmp_path)
    body, headers = binary_request(model_inputs("face_detection_full_range"))
    url = f"{s.base}/v2/models/face/infer"
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(http, "POST", url, body, headers) for _ in range(6)]
        # Requests queue behind the one interpreter; SIGTERM once the server has them all.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            metrics = http("GET", s.base + "/metrics")[2].decode()
            if 'baton_requests_total{model="face",version="1"} 6' in metrics:
                break
            time.sleep(0.005)
        s.proc.send_signal(__import__("signal").SIGTERM)
        results = [f.result() for f in futures]
    code, out, err = s.wait()
    assert code == 0, err
    assert [r[0] for r in results] == [200] * 6, [r[2][:200] for r in results]
    assert "draining" in out and "stopped" in out
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.http_port), timeout=2).close()


def test_metrics_escape_label_values(tmp_path):
    # A model is named by its folder; Prometheus' text format escapes backslash, quote and newline in labels.
    repository = make_repository(tmp_path / "models", {'we"ird\\name': ({1: "face_detection_full_range"}, None)})
    s = Server(repository, tmp_path)
    try:
        status, _, text = http("GET", s.base + "/metrics")
        assert status == 200
        assert 'baton_queue_depth{model="we\\"ird\\\\name",version="1"} 0' in text.decode(), text.decode()
    finally:
        code, _, err = s.terminate()
        assert code == 0, err


def test_per_model_delegates_and_isolation_keys(tmp_path):
    # config.ini's delegates and isolate keys give a model its own chain and isolation; startup prints
    # each model's plan, and an isolated model's plugins run in baton-plugin-host children.
    repository = make_repository(tmp_path / "models", {
        "chain": ({1: "face_detection_full_range"}, None),
        "opsonly": ({1: "face_detection_full_range"}, "delegates = none\n"),
        "isolated": ({1: "face_detection_full_range"}, "delegates = none\nisolate = builtin\n"),
    })
    s = Server(repository, tmp_path)
    try:
        plans = {line.split()[3]: line.split("plan: ", 1)[1] for line in s.lines if " plan: " in line}
        assert "xnnpack" in plans["chain"], s.lines
        assert plans["opsonly"].startswith("builtin: ") and "xnnpack" not in plans["opsonly"], s.lines
        assert plans["isolated"].startswith("builtin (isolated): "), s.lines
        children = pathlib.Path(f"/proc/{s.proc.pid}/task/{s.proc.pid}/children").read_text().split()
        names = [pathlib.Path(f"/proc/{c}/comm").read_text().strip() for c in children]
        assert any(n.startswith("baton-plugin-h") for n in names), names
        arrays = model_inputs("face_detection_full_range")
        for model in ("chain", "opsonly", "isolated"):
            status, _, body = post_json(f"{s.base}/v2/models/{model}/infer", infer_doc(arrays))
            assert status == 200, body
    finally:
        code, _, err = s.terminate()
        assert code == 0, err
    (repository / "opsonly" / "config.ini").write_text("delegates = xnnpack,\n")
    r = run_serve(tmp_path, repository)
    assert r.returncode == 1 and "config.ini:1: key 'delegates' must be plugin names separated by commas" in r.stderr, \
        r.stderr
