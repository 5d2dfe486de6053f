-- Neovim the way its users turn a server on: the plugin on the runtime path (pack/*/start), the
-- server on PATH (as `uv tool install bielik-lsp` puts it), and `vim.lsp.enable('bielik')` as the
-- whole init.lua: no setup{}. Against the real server: the client attaches, no message at all,
-- ghost text shows and <Tab> takes it, and :checkhealth bielik reports the server with no ERROR.
--
-- tests/test_editors.py makes the throwaway user (XDG_*_HOME, PATH) and runs
--   nvim --headless -i NONE -n --cmd 'luafile editors/nvim/tests/enable.lua' FILE.md
-- from the repository root: --cmd runs this before init.lua, so every message is caught.

local root = vim.fn.getcwd()
package.path = root .. '/editors/nvim/tests/?.lua;' .. package.path
local H = require('harness')
local check, step, wait_for, feed = H.check, H.step, H.wait_for, H.feed
local READY_MS = tonumber(os.getenv('BIELIK_READY_TIMEOUT_MS') or '') or 300000

local notified = H.catch_messages()

local function main()
  local buf = vim.api.nvim_get_current_buf()
  local bielik = require('bielik')

  step("vim.lsp.enable('bielik') alone attaches the server found on PATH", function()
    check(vim.lsp.is_enabled('bielik'), 'init.lua enabled it')
    check(not bielik._setup_done, 'setup{} never ran')
    local client = wait_for('the client', 20000, function()
      return vim.lsp.get_clients({ name = 'bielik', bufnr = buf })[1]
    end)
    check(client.config.cmd[1] == 'bielik-lsp', 'cmd: ' .. vim.inspect(client.config.cmd))
    check(vim.fn.exepath('bielik-lsp'):find(os.getenv('BIELIK_TEST_BIN'), 1, true) == 1,
      'bielik-lsp from PATH: ' .. vim.fn.exepath('bielik-lsp'))
    wait_for('the model', READY_MS, function()
      return bielik.state.model == 'ready' or bielik.state.model == 'error'
    end)
    check(bielik.state.model == 'ready', 'model: ' .. tostring(bielik.state.message))
    check(bielik.statusline(buf):match('^Bielik spec:auto'), 'statusline: ' .. bielik.statusline(buf))
    H.sleep(1000) -- messages that follow initialize and the configuration
  end)

  step('no message was shown', function()
    check(#notified == 0, 'vim.notify: ' .. vim.inspect(notified))
    local history = vim.trim(vim.fn.execute('messages'))
    check(history == '', ':messages: ' .. history)
  end)

  step('ghost text shows after typing, <Tab> puts it into the buffer', function()
    vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
    feed('A1. Najemca zobowiązuje się')
    local text = H.ghost_after_words(buf, { ' płacić', ' czynsz', ' w', ' terminie', ' do' })
    check(text, 'ghost text after one of five words')
    local before = H.buffer_text(buf)
    local first = vim.trim(text):match('[^\n]+') -- its first line that has words
    feed('<Tab>')
    wait_for('the ghost text in the buffer', 5000, function()
      local after = H.buffer_text(buf)
      return #after > #before and after:find(first, math.max(1, #before - 2), true)
    end)
    feed('<Esc>')
    H.log('# accepted: ' .. vim.inspect(text))
  end)

  step(':checkhealth bielik: the server, its version, backend, models and exactness; no ERROR', function()
    vim.cmd('checkhealth bielik')
    local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    local report = table.concat(lines, '\n')
    H.log('# ' .. report:gsub('\n', '\n# '))
    check(not report:find('ERROR'), 'an ERROR in the report')
    check(report:find('found: ' .. os.getenv('BIELIK_TEST_BIN'), 1, true), 'the program found')
    check(report:find('OK bielik%-lsp %d+%.%d+'), 'the version')
    check(report:find('backend %S+; target %S+; drafter'), 'backend and models')
    check(report:find('speculation exact: %a+'), 'exactness')
    check(report:find("started by vim.lsp.enable('bielik')", 1, true), 'how it started')
    check(report:find('running: client'), 'the running client')
    vim.cmd('close')
  end)
end

H.run(main, READY_MS + 180000)
