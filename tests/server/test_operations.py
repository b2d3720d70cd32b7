"""Running baton-serve: the repository read again on SIGHUP or by a poll (versions and models loaded and
unloaded while other models keep answering), the request log, and the metrics of isolated plugins'
deaths. Clients are plain urllib, as the Open Inference Protocol's REST JSON defines requests."""
import os
import shutil
import signal
import subprocess
import threading

import numpy as np

from conftest import (SERVE_EXE, Server, clean_env, crashdeleg_server, metric, http, infer_doc, json_outputs, make_repository, model_inputs, post_json,
                      real_model)

FACE = "face_detection_full_range"


def ready(server, model, version=None):
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/ready"
    return http("GET", server.base + path)[0]


class Hammer:
    """A client that keeps sending one request until stopped, counting the answers by status."""

    def __init__(self, url, doc):
        self.url, self.doc = url, doc
        self.statuses = {}
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping.is_set():
            status = post_json(self.url, self.doc)[0]
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=60)
        return self.statuses


def test_sighup_loads_new_versions_and_unloads_removed_ones_while_other_models_answer(tmp_path):
    repository = make_repository(tmp_path / "models", {"face": ({1: FACE}, None), "other": ({1: FACE}, None)})
    s = Server(repository, tmp_path)
    arrays = model_inputs(FACE)
    hammer = Hammer(f"{s.base}/v2/models/other/infer", infer_doc(arrays))
    try:
        assert ready(s, "face", 2) == 404
        # A new version: served after SIGHUP, and a request that names no version gets it.
        (repository / "face" / "2").mkdir()
        os.symlink(real_model(FACE), repository / "face" / "2" / "model.tflite")
        mark = len(s.lines)
        s.proc.send_signal(signal.SIGHUP)
        s.wait_for_line("reload: model face: loaded versions 2", start=mark)
        s.wait_for_line("model face version 2: plan: ", start=mark)
        assert ready(s, "face", 2) == 200
        status, _, body = post_json(f"{s.base}/v2/models/face/infer", infer_doc(arrays))
        assert status == 200 and json_outputs(body)[0]["model_version"] == "2", body[:200]
        # Version 1 removed: unloaded; a new model and a removed one.
        shutil.rmtree(repository / "face" / "1")
        (repository / "new" / "1").mkdir(parents=True)
        os.symlink(real_model(FACE), repository / "new" / "1" / "model.tflite")
        mark = len(s.lines)
        s.proc.send_signal(signal.SIGHUP)
        s.wait_for_line("reload: model face: unloaded versions 1", start=mark)
        s.wait_for_line("reload: model new loaded, versions 1", start=mark)
        assert ready(s, "face", 1) == 404 and ready(s, "face", 2) == 200 and ready(s, "new") == 200
        status, _, body = http("GET", f"{s.base}/v2/models/face")
        assert status == 200 and b'"versions":["2"]' in body, body
        # Nothing changed: said so.
        mark = len(s.lines)
        s.proc.send_signal(signal.SIGHUP)
        s.wait_for_line("SIGHUP: the repository has not changed", start=mark)
        # A model whose new version cannot load: said, and what was served stays.
        (repository / "face" / "3").mkdir()
        (repository / "face" / "3" / "model.tflite").write_bytes(b"not a model")
        mark = len(s.lines)
        s.proc.send_signal(signal.SIGHUP)
        line = s.wait_for_line("face' version 3", start=mark)
        assert "not served" in line, line
        assert ready(s, "face", 2) == 200 and ready(s, "face", 3) == 404
    finally:
        statuses = hammer.stop()
        code, _, err = s.terminate()
    assert code == 0, err
    # Every request to the other model was answered, through every reload.
    assert set(statuses) == {200} and statuses[200] > 0, statuses


def test_a_poll_loads_a_model_copied_into_the_repository(tmp_path):
    repository = make_repository(tmp_path / "models", {"face": ({1: FACE}, None)})
    s = Server(repository, tmp_path, ["--repository-poll-secs", "1"])
    try:
        (repository / "late" / "7").mkdir(parents=True)
        os.symlink(real_model(FACE), repository / "late" / "7" / "model.tflite")
        s.wait_for_line("reload: model late loaded, versions 7", timeout=30)
        assert ready(s, "late", 7) == 200
    finally:
        code, _, err = s.terminate()
    assert code == 0, err


def test_failed_requests_are_logged_with_their_id_and_with_log_requests_every_one(tmp_path):
    repository = make_repository(tmp_path / "models", {"face": ({1: FACE}, None)})
    arrays = model_inputs(FACE)
    s = Server(repository, tmp_path)
    try:
        doc = infer_doc(arrays)
        doc["id"] = "cam-4/0091"
        assert post_json(f"{s.base}/v2/models/face/infer", doc)[0] == 200
        bad = infer_doc([(n, a[..., :1]) for n, a in arrays])
        bad["id"] = "bad-shape-7"
        assert post_json(f"{s.base}/v2/models/face/infer", bad)[0] == 400
        assert post_json(f"{s.base}/v2/models/nosuch/infer", doc)[0] == 404
        line = s.wait_for_line('id="bad-shape-7" model face version 1: INVALID_ARGUMENT', stream="err")
        assert "does not fit" in line, line
        s.wait_for_line("model nosuch: NOT_FOUND", stream="err")
        # A request that succeeded is not logged without --log-requests.
        assert not any("cam-4/0091" in line for line in s.err_lines), s.err_lines
    finally:
        code, _, err = s.terminate()
    assert code == 0, err
    s = Server(repository, tmp_path, ["--log-requests"])
    try:
        assert post_json(f"{s.base}/v2/models/face/infer", doc)[0] == 200
        line = s.wait_for_line('id="cam-4/0091" model face version 1: OK in ', stream="err")
        assert line.startswith("baton serve: request 1 "), line
        # A client's id cannot break the log into lines.
        doc["id"] = 'two\nlines"'
        assert post_json(f"{s.base}/v2/models/face/infer", doc)[0] == 200
        s.wait_for_line('id="two?lines?" model face', stream="err")
    finally:
        code, _, err = s.terminate()
    assert code == 0, err


def test_metrics_count_the_deaths_of_an_isolated_plugin_and_every_request_is_answered(tmp_path):
    # crashdeleg (tests/plugins/crashing_plugin.cc) claims float ADD and MUL and segfaults in its process
    # at its first invoke; the request falls back to the op packs and is answered.
    s = crashdeleg_server(tmp_path, "fail = segv-invoke\n", "instances = 1\n")
    try:
        assert "crashdeleg (isolated)" in s.wait_for_line("model face version 1: plan: ")
        assert metric(s, 'baton_plugin_deaths_total{plugin="crashdeleg"}') == 0
        arrays = model_inputs(FACE)
        status, _, body = post_json(f"{s.base}/v2/models/face/infer", infer_doc(arrays))
        assert status == 200, body[:300]
        assert metric(s, 'baton_plugin_deaths_total{plugin="crashdeleg"}') == 1
        assert metric(s, 'baton_plugin_deaths_total{plugin="builtin"}') == 0
        assert all(np.isfinite(o).all() for o in json_outputs(body)[1])
    finally:
        code, _, err = s.terminate()
    assert code == 0, err


def test_the_config_files_serve_section_gives_the_options_the_command_line_does_not(tmp_path):
    make_repository(tmp_path / "conf" / "models", {"face": ({1: FACE}, None)})
    config = tmp_path / "conf" / "baton.conf"
    # model-repository relative to the config file's folder; the command line's --log-requests stands.
    config.write_text("[baton]\nthreads = 1\n\n[serve]\nmodel-repository = models\nhttp-port = 0\n"
                      "grpc-port = 0\nqueue = 5\n")
    s = Server(None, tmp_path, ["--config", str(config), "--log-requests"])
    try:
        assert any("model face, versions 1: " in line and "queue 5" in line for line in s.lines), s.lines
        assert post_json(f"{s.base}/v2/models/face/infer", infer_doc(model_inputs(FACE)))[0] == 200
        s.wait_for_line("model face version 1: OK in ", stream="err")
    finally:
        code, _, err = s.terminate()
    assert code == 0, err
    config.write_text("[serve]\nmodel-repository = models\n\nhttp_port = 0\n")
    r = subprocess.run([SERVE_EXE, "--config", str(config)], capture_output=True, text=True, timeout=60,
                       env=clean_env(tmp_path))
    assert r.returncode == 2 and f"{config}:4: unknown key 'http_port' in [serve]" in r.stderr, r.stderr
