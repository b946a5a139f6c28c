"""Model importers: ONNX (`frontends/onnx/`) and, later, PyTorch."""
