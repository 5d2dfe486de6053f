"""`bielik-lsp bench`: what each part of the product costs and gains, measured on this machine.

- runs, analysis, report: every drafter against plain decoding on the Polish corpus, with the
  library's own generation beside ours (peers), its statistics, the Markdown report and plots;
- typing: the real server driven over stdio by a simulated typist;
- engines: our llama.cpp backend against llama-cpp-python's own generation, and against MLX;
- cross: the cross-tokenizer drafter's translation modes, head to head.

They write into the current folder (or --out) and need the `bench` extra (matplotlib).
"""
