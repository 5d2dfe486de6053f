"""pytest plugin (loaded with -p, before output capture starts): re-exec with OpenBLAS.

Re-executing from conftest.py would be too late: pytest has already redirected stdout and
stderr to its capture files, and the new process would print nothing.
"""

from decoder.backends.blas import ensure_fast_blas

ensure_fast_blas()
