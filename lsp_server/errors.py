"""LSP's RequestFailed (-32803): the request was valid but cannot be served (pygls lacks it)."""

from pygls.exceptions import JsonRpcException


class RequestFailed(JsonRpcException):
    CODE = -32803
    MESSAGE = "Request failed"
