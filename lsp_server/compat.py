"""The one place pygls internals are used. Checked against pygls 2.1.1.

`JsonRPCClient.start_io` starts the server subprocess but keeps its handle private; a benchmark
client needs it for the server's pid (memory sampling) and stderr (which pygls pipes and never
reads: a chatty server would block on a full pipe).
"""

from __future__ import annotations

import asyncio

from pygls.client import JsonRPCClient


def server_process(client: JsonRPCClient) -> asyncio.subprocess.Process:
    """The subprocess `client.start_io` started."""
    process = client._server
    if process is None:
        raise RuntimeError("the client has not started a server process")
    return process
