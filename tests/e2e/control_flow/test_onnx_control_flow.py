"""Run-time control flow and data-dependent sizes from ONNX, end to end: one build each
(`xrelay.build` gives a VMLibrary: lowering/vm.py), several inputs, every result compared
with onnxruntime and with the debug executor (reference/control.py)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import xrelay
from onnx import TensorProto, helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(nodes, inputs, outputs, opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8

    return model


def _check(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]], rtol=1e-5):
    """Build once, run every feed; each result equals onnxruntime's and the debug executor's.
    Returns the library."""
    mod, params = xrelay.from_onnx(model)
    lib = xrelay.build(mod, params)
    ref = xrelay.create_executor("debug", mod, params)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    compiles = lib.compiles
    for feed in feeds:
        want = sess.run(None, feed)
        for outs in (lib.run(**feed), ref.run(**feed)):
            assert len(outs) == len(want)
            for got, exp in zip(outs, want):
                assert got.dtype == exp.dtype and got.shape == exp.shape, (got.shape, exp.shape)
                np.testing.assert_allclose(got, exp, rtol=rtol, atol=1e-6)
    assert lib.compiles == compiles, "a run compiled again"
    return lib


def _growing_loop() -> onnx.ModelProto:
    """for i in range(M): acc = concat(acc, x * i); emit sum(acc) and x + i per iteration."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["fi"], to=F),
            helper.make_node("Mul", ["x", "fi"], ["xi"]),
            helper.make_node("Concat", ["acc_in", "xi"], ["acc_out"], axis=0),
            helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            helper.make_node("Add", ["x", "fi"], ["step"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("cond_in", B, []),
            helper.make_tensor_value_info("acc_in", F, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", B, []),
            helper.make_tensor_value_info("acc_out", F, None),
            helper.make_tensor_value_info("total", F, []),
            helper.make_tensor_value_info("step", F, [3]),
        ],
    )
    loop = helper.make_node("Loop", ["M", "", "acc0"], ["acc", "totals", "steps"], body=body)
    return _model(
        [loop],
        [
            helper.make_tensor_value_info("M", I64, []),
            helper.make_tensor_value_info("x", F, [3]),
            helper.make_tensor_value_info("acc0", F, [2]),
        ],
        [
            helper.make_tensor_value_info("acc", F, None),
            helper.make_tensor_value_info("totals", F, None),
            helper.make_tensor_value_info("steps", F, None),
        ],
    )


def test_loop_trip_count_is_an_input_and_the_carried_value_grows():
    rng = np.random.default_rng(0)
    feeds = [
        {
            "M": np.array(m, np.int64),
            "x": rng.standard_normal(3).astype(np.float32),
            "acc0": rng.standard_normal(2).astype(np.float32),
        }
        for m in (3, 0, 1, 7)
    ]
    model = _growing_loop()
    mod, _ = xrelay.from_onnx(model)
    assert "relay.loop" in str(mod)
    _check(model, feeds)


def test_loop_condition_computed_by_the_body():
    """while sum(x) < limit: x = x * 2 (no trip count; the body decides when to stop)."""
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["x_in", "two"], ["x_out"]),
            helper.make_node("ReduceSum", ["x_out"], ["s"], keepdims=0),
            helper.make_node("Less", ["s", "limit"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("c", B, []),
            helper.make_tensor_value_info("x_in", F, [4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", B, []),
            helper.make_tensor_value_info("x_out", F, [4]),
        ],
        initializer=[helper.make_tensor("two", F, [], [2.0])],
    )
    model = _model(
        [helper.make_node("Loop", ["", "c0", "x"], ["y"], body=body)],
        [
            helper.make_tensor_value_info("c0", B, []),
            helper.make_tensor_value_info("x", F, [4]),
            helper.make_tensor_value_info("limit", F, []),
        ],
        [helper.make_tensor_value_info("y", F, [4])],
    )
    feeds = [
        {"c0": np.array(c), "x": np.full(4, 0.5, np.float32), "limit": np.array(lim, np.float32)}
        for c, lim in ((True, 100.0), (True, 1.0), (False, 100.0), (True, 1e6))
    ]
    _check(model, feeds)


def test_if_on_a_run_time_condition_with_branches_of_different_shapes():
    then = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", F, [4])],
    )
    other = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["e"], axis=0)],
        "else",
        [],
        [helper.make_tensor_value_info("e", F, [8])],
    )
    model = _model(
        [
            helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
            helper.make_node("Neg", ["y"], ["z"]),
        ],
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("z", F, None)],
    )
    model.graph.initializer.append(helper.make_tensor("zero", F, [], [0.0]))
    rng = np.random.default_rng(1)
    feeds = [{"x": (rng.standard_normal(4) + shift).astype(np.float32)} for shift in (3, -3, 2, -2)]
    _check(model, feeds)


def test_non_max_suppression_on_random_boxes():
    model = _model(
        [helper.make_node("NonMaxSuppression", ["boxes", "scores", "k", "iou", "score"], ["sel"])],
        [
            helper.make_tensor_value_info("boxes", F, [2, 20, 4]),
            helper.make_tensor_value_info("scores", F, [2, 3, 20]),
            helper.make_tensor_value_info("k", I64, [1]),
            helper.make_tensor_value_info("iou", F, [1]),
            helper.make_tensor_value_info("score", F, [1]),
        ],
        [helper.make_tensor_value_info("sel", I64, None)],
    )
    rng = np.random.default_rng(2)
    feeds = []
    for k, iou, score in ((5, 0.5, 0.2), (3, 0.3, 0.0), (20, 0.7, 0.9), (0, 0.5, 0.0)):
        corner = rng.uniform(0, 10, (2, 20, 2)).astype(np.float32)
        size = rng.uniform(0.5, 4, (2, 20, 2)).astype(np.float32)
        feeds.append(
            {
                "boxes": np.concatenate([corner, corner + size], axis=2),
                "scores": rng.uniform(0, 1, (2, 3, 20)).astype(np.float32),
                "k": np.array([k], np.int64),
                "iou": np.array([iou], np.float32),
                "score": np.array([score], np.float32),
            }
        )
    _check(model, feeds)


def test_unique_and_nonzero_on_random_data_feed_compiled_ops():
    """Data-dependent sizes flow into compiled ops: y = unique(x) * 2, the nonzero positions
    of x > 0, and x gathered at them (Compress with a run-time condition)."""
    model = _model(
        [
            helper.make_node("Unique", ["x"], ["u", "first", "inverse", "counts"], sorted=1),
            helper.make_node("Add", ["u", "u"], ["u2"]),
            helper.make_node("Greater", ["x", "zero"], ["pos"]),
            helper.make_node("NonZero", ["pos"], ["where"]),
            helper.make_node("Compress", ["x", "pos"], ["kept"], axis=0),
            helper.make_node("ReduceSum", ["kept"], ["total"], keepdims=0),
        ],
        [helper.make_tensor_value_info("x", F, [12])],
        [
            helper.make_tensor_value_info(n, t, None)
            for n, t in (
                ("u2", F),
                ("first", I64),
                ("inverse", I64),
                ("counts", I64),
                ("where", I64),
                ("kept", F),
                ("total", F),
            )
        ],
    )
    model.graph.initializer.append(helper.make_tensor("zero", F, [], [0.0]))
    rng = np.random.default_rng(3)
    feeds = [{"x": rng.integers(-3, 4, 12).astype(np.float32)} for _ in range(3)]
    feeds.append({"x": -np.ones(12, np.float32)})  # nothing positive: empty results
    _check(model, feeds)


def test_unsorted_unique_along_an_axis():
    model = _model(
        [helper.make_node("Unique", ["x"], ["u", "first", "inverse", "counts"], sorted=0, axis=1)],
        [helper.make_tensor_value_info("x", F, [2, 6])],
        [
            helper.make_tensor_value_info(n, t, None)
            for n, t in (("u", F), ("first", I64), ("inverse", I64), ("counts", I64))
        ],
    )
    rng = np.random.default_rng(4)
    feeds = [{"x": rng.integers(0, 2, (2, 6)).astype(np.float32)} for _ in range(3)]
    _check(model, feeds)


def test_a_loop_over_the_iteration_bound_is_an_error(monkeypatch):
    monkeypatch.setenv("XRELAY_MAX_ITERATIONS", "5")
    mod, params = xrelay.from_onnx(_growing_loop())
    lib = xrelay.build(mod, params)
    x, acc = np.ones(3, np.float32), np.ones(2, np.float32)
    assert len(lib.run(M=np.array(5, np.int64), x=x, acc0=acc)[0]) == 17
    with pytest.raises(xrelay.Error, match="more than the bound of 5"):
        lib.run(M=np.array(6, np.int64), x=x, acc0=acc)


def test_a_nonzero_result_over_the_memory_limit_is_an_error(monkeypatch):
    model = _model(
        [helper.make_node("NonZero", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", F, [64, 64])],
        [helper.make_tensor_value_info("y", I64, None)],
    )
    lib = xrelay.build(*xrelay.from_onnx(model))
    monkeypatch.setenv("XRELAY_MAX_TENSOR_BYTES", "4096")
    assert lib.run(x=np.eye(64, dtype=np.float32))[0].shape == (2, 64)
    with pytest.raises(xrelay.Error, match="relay.nonzero.*XRELAY_MAX_TENSOR_BYTES"):
        lib.run(x=np.ones((64, 64), np.float32))


def test_a_vm_library_refuses_to_be_saved(tmp_path):
    lib = xrelay.build(*xrelay.from_onnx(_growing_loop()))
    with pytest.raises(xrelay.Error, match="VM"):
        lib.save(tmp_path / "m.xrl")


def test_the_cli_runs_a_control_flow_model_and_refuses_to_compile_it(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "loop.onnx"
    onnx.save(_growing_loop(), path)
    for name, value in (
        ("M", np.array(4, np.int64)),
        ("x", np.ones(3, np.float32)),
        ("acc0", np.zeros(2, np.float32)),
    ):
        np.save(tmp_path / f"{name}.npy", value)
    feeds = [f"--input={n}={tmp_path / n}.npy" for n in ("M", "x", "acc0")]
    cli = [sys.executable, "-m", "xrelay.tools.cli"]
    done = subprocess.run(
        [*cli, "run", str(path), *feeds, "--output", str(tmp_path / "o.npz")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    outs = np.load(tmp_path / "o.npz")
    assert sorted(o.shape for o in outs.values()) == [(4,), (4, 3), (14,)]
    done = subprocess.run(
        [*cli, "compile", str(path), "-o", str(tmp_path / "m.xrl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "VM" in done.stderr


def test_top_k_with_k_computed_from_the_data():
    """k = the number of positive elements: the result's length follows the data."""
    model = _model(
        [
            helper.make_node("Greater", ["x", "zero"], ["pos"]),
            helper.make_node("Cast", ["pos"], ["ones"], to=I64),
            helper.make_node("ReduceSum", ["ones", "axes"], ["k"], keepdims=1),
            helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=1),
            helper.make_node("Mul", ["v", "v"], ["v2"]),
        ],
        [helper.make_tensor_value_info("x", F, [10])],
        [
            helper.make_tensor_value_info("v2", F, None),
            helper.make_tensor_value_info("i", I64, None),
        ],
    )
    model.graph.initializer.extend(
        [helper.make_tensor("zero", F, [], [0.0]), helper.make_tensor("axes", I64, [1], [0])]
    )
    rng = np.random.default_rng(5)
    feeds = [{"x": rng.standard_normal(10).astype(np.float32) + s} for s in (0.0, 2.0, -3.0)]
    feeds.append({"x": np.array([1, 1, 0, 2, 2, -1, 1, 0, 3, 3], np.float32)})  # ties
    _check(model, feeds)


def test_sequences_passed_in_grown_in_a_loop_and_returned():
    """A sequence input, grown by a Loop with a run-time trip count (SequenceInsert of a
    slice at the iteration number), returned with its length and its concatenation."""
    body = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["i", "axes"], ["start"]),
            helper.make_node("Add", ["start", "one"], ["end"]),
            helper.make_node("Slice", ["x", "start", "end"], ["piece"]),
            helper.make_node("SequenceInsert", ["seq_in", "piece"], ["seq_out"]),
            helper.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("c", B, []),
            helper.make_tensor_sequence_value_info("seq_in", F, None),
        ],
        [
            helper.make_tensor_value_info("c_out", B, []),
            helper.make_tensor_sequence_value_info("seq_out", F, None),
        ],
        initializer=[
            helper.make_tensor("axes", I64, [1], [0]),
            helper.make_tensor("one", I64, [1], [1]),
        ],
    )
    model = _model(
        [
            helper.make_node("Loop", ["M", "", "seq"], ["grown"], body=body),
            helper.make_node("SequenceLength", ["grown"], ["n"]),
            helper.make_node("ConcatFromSequence", ["grown"], ["joined"], axis=0),
        ],
        [
            helper.make_tensor_value_info("M", I64, []),
            helper.make_tensor_value_info("x", F, [6]),
            helper.make_tensor_sequence_value_info("seq", F, [None]),
        ],
        [
            helper.make_tensor_sequence_value_info("grown", F, None),
            helper.make_tensor_value_info("n", I64, []),
            helper.make_tensor_value_info("joined", F, None),
        ],
    )
    rng = np.random.default_rng(6)
    x = rng.standard_normal(6).astype(np.float32)
    mod, params = xrelay.from_onnx(model)
    lib, ref = xrelay.build(mod, params), xrelay.create_executor("debug", mod, params)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for m, seq in (
        (3, [np.ones(2, np.float32)]),
        (0, [np.ones(1, np.float32)] * 2),
        (5, [np.zeros(4, np.float32)]),
    ):
        feed = {"M": np.array(m, np.int64), "x": x, "seq": seq}
        want = sess.run(None, feed)
        for got in (lib.run(**feed), ref.run(**feed)):
            assert isinstance(got[0], list) and len(got[0]) == len(want[0])
            for g, w in zip(got[0], want[0]):
                np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(got[1], want[1])
            np.testing.assert_array_equal(got[2], want[2])
    with pytest.raises(xrelay.Error, match="input 'seq' is a sequence: pass a list"):
        lib.run(M=np.array(1, np.int64), x=x, seq=x)
    with pytest.raises(xrelay.Error, match="input 'seq' element 0 is float64"):
        lib.run(M=np.array(1, np.int64), x=x, seq=[np.ones(2)])


def test_a_vm_library_pickles_and_runs_in_the_same_way():
    import pickle

    lib = xrelay.build(*xrelay.from_onnx(_growing_loop()))
    again = pickle.loads(pickle.dumps(lib))
    feed = {
        "M": np.array(4, np.int64),
        "x": np.arange(3, dtype=np.float32),
        "acc0": np.ones(2, np.float32),
    }
    for got, want in zip(again.run(**feed), lib.run(**feed)):
        np.testing.assert_array_equal(got, want)


def test_loops_that_run_zero_or_many_times_do_not_grow_the_process():
    """The VM's buffers are the arrays of each run: 100 runs of a loop of 0 to 500
    iterations (a carried value that grows every iteration) leave RSS within 20 MB of where
    the first runs left it."""
    import gc

    def rss_mb() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    lib = xrelay.build(*xrelay.from_onnx(_growing_loop()))
    x, acc = np.ones(3, np.float32), np.ones(2, np.float32)
    for m in (0, 500, 0, 500):
        lib.run(M=np.array(m, np.int64), x=x, acc0=acc)
    gc.collect()
    before = rss_mb()
    for k in range(100):
        m = (k * 37) % 501
        (out, _, _) = lib.run(M=np.array(m, np.int64), x=x, acc0=acc)
        assert out.shape == (2 + 3 * m,)
    gc.collect()
    assert rss_mb() - before < 20


def test_an_optional_input_may_hold_no_value():
    """An optional graph input: None or a tensor; OptionalHasElement answers, an If on it
    takes the value or a default (OptionalGetElement only where it holds one)."""
    then = helper.make_graph(
        [
            helper.make_node("OptionalGetElement", ["opt"], ["v"]),
            helper.make_node("Mul", ["v", "two"], ["t"]),
        ],
        "then",
        [],
        [helper.make_tensor_value_info("t", F, [3])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["zeros"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", F, [3])],
    )
    opt = helper.make_value_info(
        "opt", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [3]))
    )
    model = _model(
        [
            helper.make_node("OptionalHasElement", ["opt"], ["has"]),
            helper.make_node("If", ["has"], ["y"], then_branch=then, else_branch=other),
        ],
        [opt],
        [helper.make_tensor_value_info("y", F, [3]), helper.make_tensor_value_info("has", B, [])],
        opset=18,
    )
    model.graph.initializer.extend(
        [helper.make_tensor("two", F, [], [2.0]), helper.make_tensor("zeros", F, [3], [0.0] * 3)]
    )
    mod, params = xrelay.from_onnx(model)
    lib, ref = xrelay.build(mod, params), xrelay.create_executor("debug", mod, params)
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for run in (lib.run, ref.run):
        y, has = run(opt=x)
        np.testing.assert_array_equal(y, 2 * x)
        assert bool(has)
        y, has = run(opt=None)
        np.testing.assert_array_equal(y, np.zeros(3, np.float32))
        assert not bool(has)


def test_the_cli_describes_sequence_and_optional_inputs_and_asks_for_them(tmp_path):
    import subprocess
    import sys

    opt = helper.make_value_info(
        "o", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [3]))
    )
    model = _model(
        [
            helper.make_node("OptionalHasElement", ["o"], ["has"]),
            helper.make_node("SequenceLength", ["s"], ["n"]),
        ],
        [opt, helper.make_tensor_sequence_value_info("s", F, [None])],
        [helper.make_tensor_value_info("has", B, []), helper.make_tensor_value_info("n", I64, [])],
        opset=18,
    )
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    cli = [sys.executable, "-m", "xrelay.tools.cli"]
    done = subprocess.run([*cli, "inspect", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "o: optional float32[3]" in done.stdout and "s: sequence of float32[?]" in done.stdout
    done = subprocess.run([*cli, "run", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "input 'o' (optional float32[3])" in done.stderr


def test_where_on_two_data_dependent_sizes_checks_them_at_run_time():
    """Where(a > 1, a, b) with a and b selected from two inputs: their counts are two
    symbols; equal counts run (as onnxruntime), different ones are an xrelay.Error naming
    the op (onnxruntime refuses them too), never a wrong answer."""
    model = _model(
        [
            helper.make_node("Greater", ["x", "zero"], ["px"]),
            helper.make_node("Compress", ["x", "px"], ["a"], axis=0),
            helper.make_node("Greater", ["y", "zero"], ["py"]),
            helper.make_node("Compress", ["y", "py"], ["b"], axis=0),
            helper.make_node("Greater", ["a", "one"], ["c"]),
            helper.make_node("Where", ["c", "a", "b"], ["w"]),
            helper.make_node("Max", ["a", "b"], ["m"]),
        ],
        [helper.make_tensor_value_info("x", F, [6]), helper.make_tensor_value_info("y", F, [6])],
        [helper.make_tensor_value_info("w", F, None), helper.make_tensor_value_info("m", F, None)],
    )
    model.graph.initializer.extend(
        [helper.make_tensor("zero", F, [], [0.0]), helper.make_tensor("one", F, [], [1.0])]
    )
    x = np.array([2.0, -1.0, 0.5, 3.0, -2.0, 1.5], np.float32)
    y = np.array([-1.0, 4.0, 0.25, -3.0, 5.0, 6.0], np.float32)
    lib = _check(model, [{"x": x, "y": y}, {"x": y, "y": x}])
    with pytest.raises(xrelay.Error, match="Where_5: axis 0 has size 0 where 4"):
        lib.run(x=x, y=-np.abs(y) + np.array([1, 0, 0, 0, 0, 0], np.float32))
