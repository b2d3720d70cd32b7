"""Shared set-up of baton-serve's protocol tests. `meson test -C build serve` runs them; it gives the
server, the baton tool and the .proto in BATON_SERVE_*. The clients are plain Python (urllib,
http.client, sockets) and a gRPC client generated here from server/proto/grpc_service.proto, written
from the Open Inference Protocol, never against the server's code. Every expected output comes from
`baton run` on the same inputs."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest


def _required(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests with `meson test -C build serve`")
    return value


SERVE_EXE = _required("BATON_SERVE_EXE")
BATON_EXE = _required("BATON_EXE")
PROTO = pathlib.Path(_required("BATON_SERVE_PROTO"))
MODEL_CACHE = pathlib.Path(os.environ.get("BATON_MODEL_CACHE") or
                           pathlib.Path.home() / ".cache" / "baton" / "models")

# name in the repository -> (versions: cached model file per version, config.ini text or None)
MODELS = {
    "face": ({1: "face_detection_full_range"}, None),                  # FP32, one input, two outputs
    "ssd": ({1: "mobilenet_ssd_v2_coco_quant_postprocess"}, None),     # UINT8 input, dynamic output dims
    "two": ({1: "model_1", 2: "model_quant_dynamic_1"}, None),          # two inputs; two versions
    "busy": ({1: "face_detection_full_range"}, "instances = 1\nqueue = 1\n"),   # a queue that fills
    "late": ({1: "face_detection_full_range"}, "# a deadline no run meets\ndeadline-ms = 1\n"),
}


def real_model(name):
    """The path of a fetched real model; skips (or fails with BATON_REQUIRE_MODELS=1) when absent."""
    path = MODEL_CACHE / f"{name}.tflite"
    if not path.exists():
        message = f"missing {path} (tools/fetch-models.sh fetches it)"
        if os.environ.get("BATON_REQUIRE_MODELS"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def clean_env(tmp):
    """No config, plugin path or crash journal of the machine's user leaks into the server or baton."""
    env = dict(os.environ)
    env.pop("BATON_PLUGIN_PATH", None)
    env.pop("BATON_CONFIG", None)
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    env["XDG_STATE_HOME"] = str(tmp / "state")
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    return env


def make_repository(root, models):
    for name, (versions, config) in models.items():
        for version, cached in versions.items():
            folder = root / name / str(version)
            folder.mkdir(parents=True)
            os.symlink(real_model(cached), folder / "model.tflite")
        if config is not None:
            (root / name / "config.ini").write_text(config)
    return root


class Server:
    """A running baton-serve: its process, ports and stdout lines. Once it is ready, threads read its
    stdout into `lines` and its stderr into `err_lines` as they come (so a full pipe never blocks it)."""

    def __init__(self, repository, tmp, extra=()):
        """`repository` None: the repository and ports are not on the command line (a config file's)."""
        self.tmp = tmp
        where = [] if repository is None else ["--model-repository", str(repository), "--http-port", "0",
                                               "--grpc-port", "0"]
        self.proc = subprocess.Popen(
            [SERVE_EXE, *where, "--threads", "1", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(tmp))
        self.lines = []
        self.err_lines = []
        self.http_port = self.grpc_port = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"baton-serve exited ({self.proc.wait()}): {self.proc.stderr.read()}")
            self.lines.append(line.rstrip("\n"))
            if "REST on " in line:
                self.http_port = int(line.rsplit(":", 1)[1])
            if "gRPC on " in line:
                self.grpc_port = int(line.rsplit(":", 1)[1])
            if line.startswith("baton serve: ready"):
                break
        assert self.http_port and self.grpc_port, self.lines
        self.base = f"http://127.0.0.1:{self.http_port}"
        self._readers = [threading.Thread(target=self._read, args=(f, into), daemon=True)
                         for f, into in ((self.proc.stdout, self.lines), (self.proc.stderr, self.err_lines))]
        for t in self._readers:
            t.start()

    @staticmethod
    def _read(stream, into):
        for line in stream:
            into.append(line.rstrip("\n"))

    def wait_for_line(self, text, timeout=60, start=0, stream="out"):
        """The first line from `start` on that holds `text`; fails after `timeout` seconds."""
        lines = self.lines if stream == "out" else self.err_lines
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in lines[start:]:
                if text in line:
                    return line
            if self.proc.poll() is not None and not any(t.is_alive() for t in self._readers):
                break
            time.sleep(0.02)
        raise AssertionError(f"no line with {text!r} in {lines[start:]}")

    def wait(self, timeout=60):
        """Waits for the process to end; its exit status, stdout and stderr (every line since it started)."""
        self.proc.wait(timeout=timeout)
        for t in self._readers:
            t.join(timeout=timeout)
        return self.proc.returncode, "\n".join(self.lines), "\n".join(self.err_lines)

    def terminate(self, timeout=60):
        """SIGTERM; the exit status, stdout and stderr."""
        self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def rss_kib(self):
        for line in pathlib.Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


def crashdeleg_server(tmp, fail, model_config=""):
    """A server of face_detection_full_range whose only delegate is crashdeleg (tests/plugins/
    crashing_plugin.cc: claims float ADD and MUL), isolated, with `fail` its [plugin.crashdeleg] keys."""
    plugins = tmp / "plugins"
    plugins.mkdir()
    shutil.copy(pathlib.Path(os.environ["BATON_TEST_PLUGIN_DIR"]) / "libcrashdeleg.so", plugins)
    config = tmp / "baton.conf"
    config.write_text("[plugin.crashdeleg]\n" + fail)
    repository = make_repository(tmp / "models", {"face": ({1: "face_detection_full_range"},
                                                          "delegates = crashdeleg\nisolate = crashdeleg\n" + model_config)})
    return Server(repository, tmp, ["--plugin-dir", str(plugins), "--config", str(config)])


def metric(server, name):
    """The value of one sample of the server's /metrics, by its name and labels."""
    text = http("GET", server.base + "/metrics")[2].decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no {name} in {text}")


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    repository = make_repository(tmp / "models", MODELS)
    s = Server(repository, tmp)
    yield s
    if s.proc.poll() is None:
        code, _, err = s.terminate()
        assert code == 0, err


def http(method, url, body=None, headers=None, timeout=60):
    """(status, headers, body bytes) of one request, 4xx and 5xx included."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def post_json(url, doc, **kwargs):
    return http("POST", url, json.dumps(doc).encode(), {"Content-Type": "application/json"}, **kwargs)


DATATYPE = {np.dtype("float32"): "FP32", np.dtype("uint8"): "UINT8", np.dtype("int8"): "INT8",
            np.dtype("int32"): "INT32", np.dtype("int64"): "INT64", np.dtype("float64"): "FP64",
            np.dtype("bool"): "BOOL", np.dtype("float16"): "FP16"}
NUMPY = {v: k for k, v in DATATYPE.items()}


def model_inputs(cached_name, seed=1):
    """Deterministic inputs for every input of the model, as `baton inspect --json` describes them."""
    info = json.loads(subprocess.run([BATON_EXE, "inspect", str(real_model(cached_name)), "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    rng = np.random.default_rng(seed)
    arrays = []
    for i in info["inputs"]:
        shape = i["shape"]
        if i["type"] == "FLOAT32":
            arrays.append((i["name"], rng.uniform(-1, 1, size=shape).astype(np.float32)))
        elif i["type"] == "UINT8":
            arrays.append((i["name"], rng.integers(0, 256, size=shape, dtype=np.uint8)))
        else:
            raise AssertionError(f"no generator for {i['type']}")
    return arrays


def baton_run(cached_name, arrays, tmp):
    """The outputs of `baton run` on these inputs, in the model's output order."""
    folder = pathlib.Path(tmp)
    folder.mkdir(parents=True, exist_ok=True)
    args = [BATON_EXE, "run", str(real_model(cached_name)), "--threads", "1", "--output-dir", str(folder / "out")]
    for k, (_, a) in enumerate(arrays):
        np.save(folder / f"x{k}.npy", a)
        args += ["--input", str(folder / f"x{k}.npy")]
    subprocess.run(args, check=True, capture_output=True, env=clean_env(folder))
    outs = sorted((folder / "out").glob("out_*.npy"), key=lambda p: int(p.stem[4:]))
    return [np.load(p) for p in outs]


def infer_doc(arrays, outputs=None):
    doc = {"id": "req-1", "inputs": [{"name": n, "shape": list(a.shape), "datatype": DATATYPE[a.dtype],
                                      "data": a.flatten().tolist()} for n, a in arrays]}
    if outputs is not None:
        doc["outputs"] = outputs
    return doc


def json_outputs(body):
    doc = json.loads(body)
    return doc, [np.array(o["data"], dtype=NUMPY[o["datatype"]]).reshape(o["shape"]) for o in doc["outputs"]]


def pytest_sessionfinish(session, exitstatus):
    # pytest's 5 means no test ran; for this suite that is a failure, never a pass.
    if exitstatus == 5:
        session.exitstatus = 1
