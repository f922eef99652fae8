"""Training: datasets, losses, samplers, trainer, ONNX export (the only package importing torch).

This __init__ imports nothing heavy: `models.datasets` is pure Python + pyarrow.
"""
