"""Shared set-up of the Python module's tests. `meson test python` runs them with the Python the module
was built for; it gives the built module on PYTHONPATH and the build's plugin folders in BATON_TEST_*."""
import os
import pathlib

import numpy as np
import pytest


def _required(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests with `meson test -C build python`")
    return value


BUILTIN_DIR = _required("BATON_TEST_BUILTIN_DIR")
XNNPACK_DIR = _required("BATON_TEST_XNNPACK_DIR")
TEST_PLUGIN_DIR = _required("BATON_TEST_PLUGIN_DIR")
MODELS_DIR = pathlib.Path(_required("BATON_TEST_MODELS_DIR"))
BATON_EXE = _required("BATON_EXE")
SOURCE_ROOT = pathlib.Path(_required("BATON_SOURCE_ROOT"))
QUANT_OPS = SOURCE_ROOT / "tests" / "data" / "quant-ops"
REFERENCE = SOURCE_ROOT / "tests" / "data" / "reference"
MODEL_CACHE = pathlib.Path(os.environ.get("BATON_MODEL_CACHE") or
                           pathlib.Path.home() / ".cache" / "baton" / "models")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path, monkeypatch):
    """No config, plugin path or crash journal of the machine's user leaks into a test."""
    monkeypatch.delenv("BATON_PLUGIN_PATH", raising=False)
    monkeypatch.delenv("BATON_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def real_model(name):
    """The path of a fetched real model; skips (or fails with BATON_REQUIRE_MODELS=1) when absent."""
    path = MODEL_CACHE / f"{name}.tflite"
    if not path.exists():
        message = f"missing {path} (tools/fetch-models.sh fetches it)"
        if os.environ.get("BATON_REQUIRE_MODELS"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def load_case(folder):
    """The inputs and outputs of a reference case, in the model's order."""
    folder = pathlib.Path(folder)
    inputs = [np.load(p) for p in sorted(folder.glob("in_*.npy"), key=lambda p: int(p.stem[3:]))]
    outputs = [np.load(p) for p in sorted(folder.glob("out_*.npy"), key=lambda p: int(p.stem[4:]))]
    return inputs, outputs


def pytest_sessionfinish(session, exitstatus):
    # pytest's 5 means no test ran; for this suite that is a failure, never a pass.
    if exitstatus == 5:
        session.exitstatus = 1
