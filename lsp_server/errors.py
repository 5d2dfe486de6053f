"""Errors as LSP answers, and the one place where engine work meets cancellation and failure."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

from pygls.exceptions import JsonRpcException

from decoder.config import ConfigError
from decoder.engine import PromptTooLong
from decoder.remote import ServerError

from .worker import Ticket


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed (-32803): the request was valid but cannot be served (pygls lacks it)."""

    CODE = -32803
    MESSAGE = "Request failed"


@contextlib.contextmanager
def engine_work(ticket: Ticket) -> Iterator[None]:
    """Around awaiting engine work for a request.

    `$/cancelRequest` stops the engine between cycles (pygls answers -32800), and a decoder's
    refusal becomes a one-line RequestFailed.
    """
    try:
        yield
    except asyncio.CancelledError:
        ticket.cancel()
        raise
    except (ConfigError, PromptTooLong, ServerError) as e:
        raise RequestFailed(str(e).strip().splitlines()[0]) from None
