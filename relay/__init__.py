"""The TVM Relay Python API on xrelay, for Relay scripts to run with few changes:

    from xrelay import relay
    from xrelay.relay import graph_executor

    mod, params = relay.frontend.from_onnx(model, shape={"input": (1, 3, 224, 224)})
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](relay.cpu(0)))
    m.set_input("input", relay.nd.array(x))
    m.run()
    y = m.get_output(0).numpy()

A subset of Relay, mapped onto xrelay's API (frontends, transforms, xrelay.build): the
frontends, relay.build and its factory module, create_executor ("debug", "graph", "vm",
"aot"), GraphModule, the PassContext and the passes xrelay has. Any other Relay name raises
an `xrelay.Error` naming it and what to use instead; docs/relay-migration.md lists every
call and what differs. This is a top layer: it imports the compiler, nothing imports it.
(`xrelay.dialects.relay` is the relay dialect itself: the ops, not this API.)
"""

from typing import Any

from xrelay.relay import build_module, frontend, graph_executor, nd, transform
from xrelay.relay.build_module import bind_params_by_name, build, create_executor
from xrelay.relay.nd import Device, cpu
from xrelay.relay.unsupported import UnsupportedAPIError, unsupported

__all__ = [
    "Device",
    "UnsupportedAPIError",
    "bind_params_by_name",
    "build",
    "build_module",
    "cpu",
    "create_executor",
    "frontend",
    "graph_executor",
    "nd",
    "transform",
]


def __getattr__(name: str) -> Any:
    raise unsupported("relay", name, __all__)
