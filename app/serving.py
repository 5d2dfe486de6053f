"""`bielik-lsp serve-model`: start an inference server on a model, for a team to point editors at.

Two servers: mlx_lm.server (ships with mlx-lm; Macs, and Linux CPUs through MLX) and
llama.cpp's llama-server (a GGUF on CPU or GPU, with its own n-gram speculation). vLLM and
SGLang are started with their own commands (docs/deploy.md).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

from decoder.backends.blas import find_openblas
from decoder.backends.models import ModelLoadError
from decoder.config import Settings

SERVERS = ("mlx", "llama")
LLAMA_SERVER_ENV = "BIELIK_LSP_LLAMA_SERVER"  # path of llama-server when it is not on PATH
LLAMA_CONTEXT = 8192
LLAMA_SPECULATION = "ngram-mod"  # llama-server's n-gram speculation that pays on Polish lists


@dataclass(frozen=True)
class ServerCommand:
    argv: list[str]
    env: dict[str, str]
    url: str  # what to give bielik-lsp as --target


def llama_server_binary() -> str | None:
    """llama-server from $BIELIK_LSP_LLAMA_SERVER or PATH, if this machine has it."""
    return os.environ.get(LLAMA_SERVER_ENV) or shutil.which("llama-server")


def default_server() -> str:
    """llama-server where it is installed (and not on a Mac), else mlx_lm.server."""
    return "llama" if sys.platform != "darwin" and llama_server_binary() else "mlx"


def server_command(
    settings: Settings, server: str, host: str, port: int, extra: list[str]
) -> ServerCommand:
    """The command line that serves `settings.target` with `server` on host:port."""
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/v1"
    env = dict(os.environ)
    if server == "mlx":
        from decoder.backends.models import resolve

        path, _ = resolve(settings.target, dtype=settings.dtype)
        argv = [sys.executable, "-m", "mlx_lm", "server", "--model", str(path)]
        argv += ["--host", host, "--port", str(port), *extra]
        blas = find_openblas() if sys.platform.startswith("linux") else None
        if blas:  # MLX's Linux wheel is ~20x slower at prefill on its bundled reference BLAS
            env["LD_PRELOAD"] = ":".join(p for p in (blas, env.get("LD_PRELOAD", "")) if p)
        return ServerCommand(argv, env, url)
    binary = llama_server_binary()
    if binary is None:
        raise ModelLoadError(
            f"llama-server is not installed: put it on PATH or set ${LLAMA_SERVER_ENV}"
        )
    argv = [binary, *_llama_model_args(settings.target), "--host", host, "--port", str(port)]
    argv += ["--ctx-size", str(LLAMA_CONTEXT), "--spec-type", LLAMA_SPECULATION]
    if settings.api_key_file:
        argv += ["--api-key-file", os.path.expanduser(settings.api_key_file)]
    return ServerCommand([*argv, *extra], env, url)


def _llama_model_args(spec: str) -> list[str]:
    """llama-server's model arguments: a GGUF file, an embedded model's GGUF, or a hub repo."""
    from decoder.backends.models import EMBEDDED_PREFIX, HUB_REPO

    if spec.startswith(EMBEDDED_PREFIX):
        from decoder.backends.embedded import embedded_gguf

        return ["-m", str(embedded_gguf(spec[len(EMBEDDED_PREFIX) :]))]
    if spec.lower().endswith(".gguf"):
        if not os.path.isfile(os.path.expanduser(spec)):
            raise ModelLoadError(f"no such GGUF file: {spec}")
        return ["-m", os.path.expanduser(spec)]
    if HUB_REPO.fullmatch(spec):
        return ["-hf", spec]  # llama-server downloads a GGUF repo itself
    raise ModelLoadError(
        f"llama-server serves GGUF models: give a .gguf file, embedded:NAME or a GGUF repo, "
        f"not {spec!r}"
    )


def exec_server(command: ServerCommand) -> None:
    """Replace this process with the server, so signals and the exit code are the server's."""
    print(
        f"bielik-lsp: serving on {command.url}; point editors at it with "
        f"`bielik-lsp --target {command.url}`\n  {' '.join(command.argv)}",
        file=sys.stderr,
        flush=True,
    )
    os.execvpe(command.argv[0], command.argv, command.env)
