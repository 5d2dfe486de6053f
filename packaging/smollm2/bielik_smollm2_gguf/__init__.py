"""SmolLM2-135M-Instruct, Q4_1 GGUF: the file, and the sha256 it was published with."""

from pathlib import Path

MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
EXPECTED_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF = Path(__file__).with_name(MODEL_NAME)
