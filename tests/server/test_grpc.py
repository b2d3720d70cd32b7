"""baton-serve over gRPC, through a client generated here by grpc_tools from server/proto/grpc_service.proto
(the published protocol's messages and service): every RPC, typed and raw contents, the errors."""
import json
import subprocess
import sys

import grpc
import numpy as np
import pytest

from conftest import (DATATYPE, MODELS, NUMPY, PROTO, baton_run, http, infer_doc, json_outputs, model_inputs,
                      post_json)


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    out = tmp_path_factory.mktemp("grpc_client")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO.parent}", f"--python_out={out}",
                    f"--grpc_python_out={out}", str(PROTO)], check=True)
    sys.path.insert(0, str(out))
    import grpc_service_pb2
    import grpc_service_pb2_grpc
    return grpc_service_pb2, grpc_service_pb2_grpc


@pytest.fixture(scope="session")
def stub(server, pb):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}",
                                    options=[("grpc.max_receive_message_length", 64 << 20)])
    yield pb[1].GRPCInferenceServiceStub(channel)
    channel.close()


def test_server_rpcs(stub, pb):
    m = pb[0]
    assert stub.ServerLive(m.ServerLiveRequest()).live
    assert stub.ServerReady(m.ServerReadyRequest()).ready
    meta = stub.ServerMetadata(m.ServerMetadataRequest())
    assert meta.name == "baton" and meta.version and "binary_tensor_data" in meta.extensions


@pytest.mark.parametrize("name", ["face", "ssd", "two"])
def test_model_rpcs_agree_with_rest(server, stub, pb, name):
    m = pb[0]
    assert stub.ModelReady(m.ModelReadyRequest(name=name)).ready
    for version in MODELS[name][0]:
        assert stub.ModelReady(m.ModelReadyRequest(name=name, version=str(version))).ready
    meta = stub.ModelMetadata(m.ModelMetadataRequest(name=name))
    rest = json.loads(http("GET", f"{server.base}/v2/models/{name}")[2])
    assert meta.name == rest["name"] and list(meta.versions) == rest["versions"] and meta.platform == rest["platform"]
    for got, want in [(meta.inputs, rest["inputs"]), (meta.outputs, rest["outputs"])]:
        assert [(t.name, t.datatype, list(t.shape)) for t in got] == [(t["name"], t["datatype"], t["shape"]) for t in want]


def typed_request(m, name, arrays, version=""):
    req = m.ModelInferRequest(model_name=name, model_version=version, id="g-1")
    for n, a in arrays:
        t = req.inputs.add(name=n, datatype=DATATYPE[a.dtype], shape=list(a.shape))
        if a.dtype == np.float32:
            t.contents.fp32_contents.extend(a.flatten().tolist())
        elif a.dtype == np.uint8:
            t.contents.uint_contents.extend(a.flatten().tolist())
        else:
            raise AssertionError(a.dtype)
    return req


def raw_request(m, name, arrays):
    req = m.ModelInferRequest(model_name=name)
    for n, a in arrays:
        req.inputs.add(name=n, datatype=DATATYPE[a.dtype], shape=list(a.shape))
        req.raw_input_contents.append(a.tobytes())
    return req


def typed_outputs(res):
    outs = []
    for o in res.outputs:
        assert o.datatype == "FP32", o.datatype  # every output of the test models
        outs.append(np.array(o.contents.fp32_contents, dtype=np.float32).reshape(list(o.shape)))
    return outs


def raw_outputs(res):
    assert len(res.raw_output_contents) == len(res.outputs)
    return [np.frombuffer(raw, dtype=NUMPY[o.datatype]).reshape(list(o.shape))
            for o, raw in zip(res.outputs, res.raw_output_contents)]


@pytest.mark.parametrize("name", ["face", "ssd", "two"])
def test_model_infer_equals_baton_run_and_rest(server, stub, pb, tmp_path, name):
    m = pb[0]
    versions = MODELS[name][0]
    cached = versions[max(versions)]
    arrays = model_inputs(cached, seed=11)
    expected = baton_run(cached, arrays, tmp_path)
    res = stub.ModelInfer(typed_request(m, name, arrays))
    assert res.model_name == name and res.model_version == str(max(versions)) and res.id == "g-1"
    assert len(res.raw_output_contents) == 0  # typed in, typed out
    typed = typed_outputs(res)
    raw = raw_outputs(stub.ModelInfer(raw_request(m, name, arrays)))
    rest = json_outputs(post_json(f"{server.base}/v2/models/{name}/infer", infer_doc(arrays))[2])[1]
    assert len(typed) == len(raw) == len(rest) == len(expected)
    for t, r, j, want in zip(typed, raw, rest, expected):
        np.testing.assert_array_equal(t, want)
        np.testing.assert_array_equal(r, want)
        np.testing.assert_array_equal(j, want)


def test_model_infer_by_version_and_requested_outputs(stub, pb, tmp_path):
    m = pb[0]
    arrays = model_inputs("model_1", seed=4)
    expected = baton_run("model_1", arrays, tmp_path)
    req = raw_request(m, "two", arrays)
    req.model_version = "1"
    meta = stub.ModelMetadata(m.ModelMetadataRequest(name="two", version="1"))
    req.outputs.add(name=meta.outputs[1].name)
    res = stub.ModelInfer(req)
    assert res.model_version == "1" and [o.name for o in res.outputs] == [meta.outputs[1].name]
    np.testing.assert_array_equal(raw_outputs(res)[0], expected[1])


def expect_error(call, code, *words):
    with pytest.raises(grpc.RpcError) as e:
        call()
    assert e.value.code() == code, (e.value.code(), e.value.details())
    for w in words:
        assert w in e.value.details(), e.value.details()


def test_bad_requests_name_the_input(stub, pb):
    m = pb[0]
    arrays = model_inputs("face_detection_full_range")
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    expect_error(lambda: stub.ModelInfer(typed_request(m, "nosuch", arrays)), grpc.StatusCode.NOT_FOUND, "nosuch")
    expect_error(lambda: stub.ModelInfer(typed_request(m, "two", model_inputs("model_1"), version="9")),
                 grpc.StatusCode.NOT_FOUND, "'9'")
    expect_error(lambda: stub.ModelMetadata(m.ModelMetadataRequest(name="nosuch")), grpc.StatusCode.NOT_FOUND, "nosuch")
    expect_error(lambda: stub.ModelReady(m.ModelReadyRequest(name="nosuch")), grpc.StatusCode.NOT_FOUND, "nosuch")

    req = typed_request(m, "face", arrays)
    req.inputs[0].datatype = "FP64"
    expect_error(lambda: stub.ModelInfer(req), invalid, "'input'", "FP64", "FP32")
    req = typed_request(m, "face", arrays)
    del req.inputs[0].shape[:]
    req.inputs[0].shape.extend([1, 192, 3, 192])
    expect_error(lambda: stub.ModelInfer(req), invalid, "'input'", "[1,192,3,192]")
    req = typed_request(m, "face", arrays)
    req.inputs[0].contents.fp32_contents.append(0.5)
    expect_error(lambda: stub.ModelInfer(req), invalid, "'input'", "110592", "110593")
    req = raw_request(m, "face", arrays)
    req.raw_input_contents[0] = req.raw_input_contents[0][:-2]
    expect_error(lambda: stub.ModelInfer(req), invalid, "'input'", "bytes")
    req = raw_request(m, "face", arrays)
    req.raw_input_contents.append(b"")
    expect_error(lambda: stub.ModelInfer(req), invalid, "raw_input_contents")
    req = typed_request(m, "face", arrays)
    req.inputs[0].name = "image"
    expect_error(lambda: stub.ModelInfer(req), invalid, "'image'")
    req = typed_request(m, "face", arrays)
    req.outputs.add(name="boxes")
    expect_error(lambda: stub.ModelInfer(req), invalid, "'boxes'")
    ssd = model_inputs("mobilenet_ssd_v2_coco_quant_postprocess")
    req = typed_request(m, "ssd", ssd)
    req.inputs[0].contents.uint_contents[3] = 256
    expect_error(lambda: stub.ModelInfer(req), invalid, "'normalized_input_image_tensor'", "UINT8")
    # The server still answers.
    assert stub.ServerLive(m.ServerLiveRequest()).live


def test_queue_full_is_unavailable_and_deadline_is_deadline_exceeded(stub, pb):
    m = pb[0]
    arrays = model_inputs("face_detection_full_range")
    expect_error(lambda: stub.ModelInfer(raw_request(m, "late", arrays)), grpc.StatusCode.DEADLINE_EXCEEDED,
                 "deadline")
    futures = [stub.ModelInfer.future(raw_request(m, "busy", arrays)) for _ in range(24)]
    codes = []
    for f in futures:
        try:
            f.result()
            codes.append(grpc.StatusCode.OK)
        except grpc.RpcError as e:
            codes.append(e.code())
            assert "queue is full" in e.details()
    assert set(codes) == {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE}, codes
