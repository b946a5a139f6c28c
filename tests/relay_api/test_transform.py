"""relay.transform: passes return transformed copies; Sequential and relay.build follow the
PassContext (levels, required and disabled passes); BYOC partitioning and composites run
through relay.build; the PassContext refuses what xrelay cannot honour."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import xrelay
from xdsl.dialects import func
from xrelay import relay
from xrelay.relay import graph_executor, transform
from xrelay.signature import main_function

from . import models

rng = np.random.default_rng(30)


def op_counts(mod) -> Counter:
    return Counter(op.name for op in mod.walk())


@pytest.fixture(scope="module")
def cnn():
    mod, params = relay.frontend.from_onnx(models.cnn())
    return mod, params, rng.standard_normal((1, 3, 16, 16), np.float32)


def debug(mod, params, *inputs):
    return relay.create_executor("debug", mod, params=params).evaluate()(*inputs)


def test_bind_simplify_fold(cnn):
    mod, params, x = cnn
    text = str(mod)
    bound = relay.build_module.bind_params_by_name(mod, params)
    assert not main_function(bound).args[1:]  # every parameter is now a constant
    simplified = transform.SimplifyInference()(bound)
    assert "relay.nn.batch_norm" not in op_counts(simplified)  # folded into conv1's weights
    folded = transform.FoldConstant()(transform.InferType()(simplified))
    assert op_counts(folded)["relay.multiply"] < op_counts(simplified)["relay.multiply"]
    assert str(mod) == text  # passes leave their argument unchanged
    want = debug(mod, params, x)
    for got, ref in zip(debug(folded, {}, x), want):
        models.assert_close(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_bind_params_by_name_on_main_returns_main(cnn):
    mod, params, _ = cnn
    bound = relay.build_module.bind_params_by_name(main_function(mod), params)
    assert isinstance(bound, func.FuncOp) and bound.sym_name.data == "main"
    assert len(bound.args) == 1 and len(main_function(mod).args) == 11


def test_sequential_follows_the_pass_context(cnn):
    mod, params, _ = cnn
    bound = relay.build_module.bind_params_by_name(mod, params)
    seq = transform.Sequential([transform.SimplifyInference(), transform.FoldConstant()])
    with transform.PassContext(opt_level=1):
        unfolded = seq(bound)  # FoldConstant is a level-2 pass
    with transform.PassContext(opt_level=2):
        folded = seq(bound)
    with transform.PassContext(opt_level=1, required_pass=["FoldConstant"]):
        required = seq(bound)
    with transform.PassContext(opt_level=3, disabled_pass=["FoldConstant", "AlterOpLayout"]):
        disabled = seq(bound)
    assert transform.PassContext.current().opt_level == 2  # the default, outside any context
    multiplies = [op_counts(m)["relay.multiply"] for m in (unfolded, folded, required, disabled)]
    assert multiplies[0] == multiplies[3] > multiplies[1] == multiplies[2]


def test_opt_level_decides_fusion():
    mod, params = relay.frontend.from_onnx(models.mlp(batch=2))
    x = rng.standard_normal((2, 16), np.float32)
    want = debug(mod, params, x).numpy()
    for ctx, fused in [
        (transform.PassContext(opt_level=0), False),
        (transform.PassContext(opt_level=3), True),
        (transform.PassContext(opt_level=3, disabled_pass=["FuseOps"]), False),
    ]:
        with ctx:
            lib = relay.build(mod, target="llvm", params=params)
        assert lib.get_lib().meta["options"]["kernels"] is fused
        m = graph_executor.GraphModule(lib["default"](relay.cpu()))
        m.run(x=x)
        models.assert_close(m.get_output(0).numpy(), want, rtol=1e-5, atol=1e-6)


def test_partition_for_the_numpy_target_then_build():
    mod, params = relay.frontend.from_onnx(models.mlp(batch=2))
    x = rng.standard_normal((2, 16), np.float32)
    seq = transform.Sequential(
        [
            transform.AnnotateTarget(["numpy"]),
            transform.MergeCompilerRegions(),
            transform.PartitionGraph(),
        ]
    )
    partitioned = seq(mod)
    compilers = [
        op.attributes["Compiler"].data for op in partitioned.ops if "Compiler" in op.attributes
    ]
    assert compilers and set(compilers) == {"numpy"}
    lib = relay.build(partitioned, params=params).get_lib()
    assert lib.externals  # the regions run through the numpy target's codegen
    (got,) = lib.run(x)
    models.assert_close(got, debug(mod, params, x).numpy(), rtol=1e-5, atol=1e-6)


def test_merge_composite_with_a_relay_style_table():
    from xrelay.transforms.pattern import is_constant, is_op, wildcard

    mod, params = relay.frontend.from_onnx(models.mlp(batch=2))
    x = rng.standard_normal((2, 16), np.float32)
    bound = relay.build_module.bind_params_by_name(mod, params)
    dense_add = is_op("add")(is_op("nn.dense")(wildcard(), is_constant()), is_constant())
    table = [("dense_bias_relu", is_op("nn.relu")(dense_add)), ("dense_bias", dense_add)]
    merged = transform.MergeComposite(table)(bound)
    composites = sorted(
        op.attributes["Composite"].data for op in merged.ops if "Composite" in op.attributes
    )
    assert composites == ["dense_bias", "dense_bias_relu"]
    got = relay.create_executor("graph", merged).evaluate()(x)
    models.assert_close(got.numpy(), debug(mod, params, x).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"config": {"relay.FuseOps.max_depth": 4}}, "config 'relay.FuseOps.max_depth'"),
        ({"instruments": [object()]}, "instruments are not supported"),
        ({"opt_level": 7}, "opt_level must be an integer from 0 to 4"),
        ({"disabled_pass": ["FoldConstnat"]}, "disabled_pass names 'FoldConstnat': unknown"),
        ({"required_pass": ["AlterOpLayout"]}, "'AlterOpLayout': xrelay does not have"),
        ({"trace": print}, "option 'trace' is not supported"),
    ],
)
def test_pass_context_refuses_what_it_cannot_honour(kwargs, message):
    with pytest.raises(xrelay.Error, match=message):
        transform.PassContext(**kwargs)
