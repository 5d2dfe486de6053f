"""The application: the `bielik-lsp` command line, `serve-model`, and every benchmark.

The top layer: it may import the language server (lsp_server), the decoder and polish; none of
them imports it.
"""
