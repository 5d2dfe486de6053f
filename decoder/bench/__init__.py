"""`bielik-lsp bench`: runs on a Polish corpus, their statistics, and the report."""
