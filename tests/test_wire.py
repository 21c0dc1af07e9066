"""The wire format: JSON + safetensors, never pickle."""

import math
import socket

import pytest
import torch

from grader.worker.runtime import wire


def roundtrip(value, make_handle=None):
    doc, tensors = wire.encode(value, make_handle)
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"value": doc}, tensors)
        msg, got = wire.recv(b)
    return wire.decode(msg["value"], got)


def test_values_roundtrip():
    value = {
        "a": [1, 2.5, None, True, "x"],
        "t": (1, (2, 3)),
        "nan": math.nan,
        "inf": -math.inf,
        "size": torch.Size([2, 3]),
        "dtype": torch.float64,
    }
    out = roundtrip(value)
    assert out["a"] == [1, 2.5, None, True, "x"] and out["t"] == (1, (2, 3))
    assert math.isnan(out["nan"]) and out["inf"] == -math.inf and out["size"] == (2, 3)
    assert out["dtype"] is torch.float64


def test_tensors_become_plain_dense_cpu_copies():
    base = torch.arange(12.0).reshape(3, 4)
    view = base.t()  # non-contiguous view
    param = torch.nn.Parameter(torch.ones(2))
    out = roundtrip([view, param, torch.tensor(3, dtype=torch.int64), torch.zeros(0, 5)])
    assert torch.equal(out[0], view) and out[0].is_contiguous()
    assert type(out[1]) is torch.Tensor and not out[1].requires_grad
    assert out[2].dtype == torch.int64 and out[3].shape == (0, 5)


def test_tensor_subclass_arrives_as_plain_tensor():
    class Sneaky(torch.Tensor):
        pass

    t = torch.ones(3).as_subclass(Sneaky)
    out = roundtrip(t)
    assert type(out) is torch.Tensor and torch.equal(out, torch.ones(3))


def test_objects_become_handles_or_are_refused():
    with pytest.raises(wire.WireError, match="cannot cross the wire"):
        wire.encode(object())
    out = roundtrip([object()], make_handle=lambda obj: (7, "Thing"))
    assert isinstance(out[0], wire.Handle) and out[0].id == 7 and out[0].type == "Thing"


def test_sparse_tensors_are_refused():
    with pytest.raises(wire.WireError, match="dense"):
        wire.encode(torch.eye(3).to_sparse())


def test_malformed_frames_are_rejected():
    for payload, match in [
        (wire.HEADER.pack(5, 0) + b"nope!", "malformed message"),
        (wire.HEADER.pack(2, 0) + b"[]", "must be a JSON object"),
        (wire.HEADER.pack(wire.MAX_JSON + 1, 0), "larger than the limit"),
        (wire.HEADER.pack(2, 4) + b"{}" + b"junk", "malformed tensor payload"),
    ]:
        a, b = socket.socketpair()
        with a, b:
            a.sendall(payload)
            with pytest.raises(wire.WireError, match=match):
                wire.recv(b)


def test_unknown_markers_and_dangling_tensor_refs_are_rejected():
    with pytest.raises(wire.WireError):
        wire.decode({"$tensor": "t9"}, {})
    with pytest.raises(wire.WireError):
        wire.decode({"$evil": 1}, {})
    deep = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(wire.WireError, match="nested"):
        wire.decode(deep, {})


def test_a_pickled_payload_is_refused_not_loaded():
    import io

    buf = io.BytesIO()
    torch.save({"x": torch.ones(2)}, buf)  # what a worker might send to get code run on unpickling
    blob = buf.getvalue()
    a, b = socket.socketpair()
    with a, b:
        a.sendall(wire.HEADER.pack(2, len(blob)) + b"{}" + blob)
        with pytest.raises(wire.WireError, match="malformed tensor payload"):
            wire.recv(b)


def test_a_malformed_value_is_a_wire_error_that_quotes_nothing_the_worker_sent():
    mark = "MARK-4f1d"
    for doc in (
        {"$float": mark},
        {"$handle": mark, "type": "x"},
        {"$dict": mark},
        {"$dict": [[mark]]},
        {"$tuple": mark},
        {"$dtype": mark},
        {"$tensor": mark},
        {mark: 1},
    ):
        with pytest.raises(wire.WireError) as e:
            wire.decode(doc, {})
        assert mark not in str(e.value), (doc, str(e.value))
    header = b'{"t0":{"dtype":"' + mark.encode() + b'","shape":[1],"data_offsets":[0,4]}}'
    blob = len(header).to_bytes(8, "little") + header + b"\0" * 4
    a, b = socket.socketpair()
    with a, b:
        a.sendall(wire.HEADER.pack(2, len(blob)) + b"{}" + blob)
        with pytest.raises(wire.WireError) as e:
            wire.recv(b)
    assert mark not in str(e.value)


def test_decoding_is_bounded_in_tensors_values_and_time():
    header = (
        b"{"
        + b",".join(b'"t%d":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}' % i for i in range(wire.MAX_TENSORS + 1))
        + b"}"
    )
    blob = len(header).to_bytes(8, "little") + header
    a, b = socket.socketpair()
    with a, b:
        import threading  # the frame is larger than the socket's buffer: send it from a thread

        sender = threading.Thread(target=a.sendall, args=(wire.HEADER.pack(2, len(blob)) + b"{}" + blob,))
        sender.start()
        with pytest.raises(wire.WireError, match="more than 4096 tensors"):
            wire.recv(b)
        sender.join()
    with pytest.raises(wire.WireError, match="more than 1000000 values"):
        wire.decode([0] * (wire.MAX_VALUES + 1), {})
    with pytest.raises(wire.Overtime):
        wire.decode([[0] * 10] * 10_000, {}, deadline=0.0)  # a deadline already past


def test_a_frame_trickled_byte_by_byte_cannot_outlast_the_deadline():
    import time

    a, b = socket.socketpair()
    with a, b:
        a.sendall(wire.HEADER.pack(100, 0) + b"{")  # and never the rest
        with pytest.raises(wire.Overtime):
            wire.recv(b, deadline=time.monotonic() + 0.2)
