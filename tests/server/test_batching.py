"""Dynamic batching in baton-serve (config.ini's max-batch, batch-delay-us): queued requests of one shape run
as one, their inputs joined along the first dimension, each answered with its own rows. The model is
tests/data/serve/batch_fc.tflite (tools/serve-models.mjs): y = tanh(x W^T + b), x [-1, 4], y [-1, 3];
the expected rows are that function in float64, by hand."""
import concurrent.futures
import os
import pathlib

import numpy as np

from conftest import Server, json_outputs, make_repository, metric, post_json
from test_rest import run_serve

MODEL = pathlib.Path(__file__).resolve().parent.parent / "data" / "serve" / "batch_fc.tflite"
W = np.array([[0.5, -0.25, 0.125, 1], [-1, 0.75, 0.5, -0.5], [0.25, 0.25, -0.75, 0.375]])
B = np.array([0.1, -0.2, 0.05])


def fc_repository(root, config):
    (root / "fc" / "1").mkdir(parents=True)
    os.symlink(MODEL, root / "fc" / "1" / "model.tflite")
    (root / "fc" / "config.ini").write_text(config)
    return root


def test_queued_requests_run_as_one_batch_and_each_gets_its_rows(tmp_path):
    repository = fc_repository(tmp_path / "models", "instances = 1\nmax-batch = 16\nbatch-delay-us = 400000\n")
    s = Server(repository, tmp_path)
    try:
        assert any("model fc, versions 1: 1 instances" in line and "batches of up to 16 rows" in line
                   for line in s.lines), s.lines
        rng = np.random.default_rng(7)
        xs = [rng.uniform(-2, 2, size=(rows, 4)).astype(np.float32) for rows in (1, 2, 3, 1, 2, 3)]
        docs = [{"id": f"r{k}", "inputs": [{"name": "t0", "shape": list(x.shape), "datatype": "FP32",
                                            "data": x.flatten().tolist()}]} for k, x in enumerate(xs)]
        with concurrent.futures.ThreadPoolExecutor(len(docs)) as pool:
            answers = list(pool.map(lambda d: post_json(f"{s.base}/v2/models/fc/infer", d), docs))
        for x, (status, _, body) in zip(xs, answers):
            assert status == 200, body
            doc, (y,) = json_outputs(body)
            assert y.shape == (x.shape[0], 3), y.shape
            np.testing.assert_allclose(y, np.tanh(x.astype(np.float64) @ W.T + B), rtol=0, atol=2e-6)
        # Six requests, fewer runs: they waited for each other (400 ms), twelve rows fit in one batch.
        assert metric(s, 'baton_requests_total{model="fc",version="1"}') == 6
        assert metric(s, 'baton_inference_runs_total{model="fc",version="1"}') < 6
        # A request alone still runs, after the delay at most.
        status, _, body = post_json(f"{s.base}/v2/models/fc/infer", docs[2])
        assert status == 200, body
        np.testing.assert_allclose(json_outputs(body)[1][0], np.tanh(xs[2].astype(np.float64) @ W.T + B), atol=2e-6)
    finally:
        code, _, err = s.terminate()
    assert code == 0, err


def test_batching_a_model_without_a_batch_dimension_is_refused_at_start(tmp_path):
    repository = make_repository(tmp_path / "models", {"face": ({1: "face_detection_full_range"}, "max-batch = 4\n")})
    r = run_serve(tmp_path, repository)
    assert r.returncode == 1, r.stderr
    assert ("input 'input' has shape [1,192,192,3]: max-batch needs every input's and output's first dimension "
            "dynamic (-1)") in r.stderr, r.stderr
    (repository / "face" / "config.ini").write_text("max-batch = 0\n")
    r = run_serve(tmp_path, repository)
    assert r.returncode == 1 and "key 'max-batch' must be an integer from 1 to 65536, got '0'" in r.stderr, r.stderr
