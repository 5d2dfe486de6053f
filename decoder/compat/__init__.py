"""The private or unstable names of other libraries that bielik-lsp needs, one module per library.

Each module names the version it was checked against; tests/test_compat.py fails loudly when
an installed version no longer provides what is used here. Nothing outside these modules (and
lsp_server/compat.py for pygls) touches another library's private names:
scripts/check_structure.py enforces it in CI.
"""
