-- bielik-lsp for Neovim 0.11+'s vim.lsp.enable('bielik'): with the server on PATH (uv tool install
-- bielik-lsp), nothing else is needed. The configuration is bielik.nvim's (require('bielik')
-- .lsp_config): `bielik-lsp serve` for markdown, text and tex buffers, root at .git, the server
-- settings given to setup{} (none: the server's config file and defaults), its status
-- notifications, and, through an LspAttach autocmd, ghost text with <Tab> and the other keys.
-- Override any field as usual: vim.lsp.config('bielik', { settings = { bielik = { preset = 'bielik' } } }).
return require('bielik').lsp_config()
