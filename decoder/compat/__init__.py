"""Every use of a library's private or unstable API.

One module per library, each naming the version it was checked against.
"""
