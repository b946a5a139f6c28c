"""Model importers into relay and qnn: ONNX (`frontends/onnx/`) and PyTorch
(`frontends/pytorch/`: torch.export programs and TorchScript)."""
