-- bielik.nvim at startup: its user commands and the LspAttach hook that gives the server's buffers
-- ghost text (require('bielik').init). The server starts with vim.lsp.enable('bielik')
-- (lsp/bielik.lua) or require('bielik').setup{} (lazy.nvim calls it with `opts`); see :help bielik.
if vim.g.loaded_bielik then
  return
end
vim.g.loaded_bielik = true
require('bielik').init()
