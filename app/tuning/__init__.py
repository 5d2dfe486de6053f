"""`bielik-lsp tune-drafter`: the drafter tuned to the target (and the writer) by s-CDF."""
