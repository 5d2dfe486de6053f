-- A first start as editors/README.md sets it up without a plugin manager (the plugin linked into
-- pack/*/start, `require('bielik').setup({ cmd = ... })` and nothing else in init.lua), against
-- the real server: no message at all, :BielikStats without an error line, ghost text shows.
--
-- tests/test_editors.py makes the throwaway user (XDG_CONFIG_HOME, XDG_DATA_HOME) and runs
--   nvim --headless -i NONE -n --cmd 'luafile editors/nvim/tests/quiet_start.lua' FILE.md
-- from the repository root: --cmd runs this before init.lua, so every message is caught.

local root = vim.fn.getcwd()
package.path = root .. '/editors/nvim/tests/?.lua;' .. package.path
local H = require('harness')
local check, step, wait_for, feed = H.check, H.step, H.wait_for, H.feed
local READY_MS = tonumber(os.getenv('BIELIK_READY_TIMEOUT_MS') or '') or 300000

local notified = H.catch_messages()

local function main()
  local bielik = require('bielik')
  local buf = vim.api.nvim_get_current_buf()

  step('the README set-up starts the server for the markdown file', function()
    check(vim.bo[buf].filetype == 'markdown', 'filetype: ' .. vim.bo[buf].filetype)
    wait_for('the client', 20000, function()
      return #bielik.clients(buf) == 1
    end)
    wait_for('the model', READY_MS, function()
      return bielik.state.model == 'ready' or bielik.state.model == 'error'
    end)
    check(bielik.state.model == 'ready', 'model: ' .. tostring(bielik.state.message))
    H.sleep(1000) -- messages that follow initialize and the configuration
  end)

  step('no message was shown', function()
    check(#notified == 0, 'vim.notify: ' .. vim.inspect(notified))
    local history = vim.trim(vim.fn.execute('messages'))
    check(history == '', ':messages: ' .. history)
  end)

  step(':BielikStats says the model is ready, without an error', function()
    vim.cmd('BielikStats')
    wait_for('the stats window', 10000, function()
      return vim.api.nvim_buf_get_name(0):find('bielik://stats', 1, true)
    end)
    local first = vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]
    check(first == 'Bielik statistics — model ready', 'first line: ' .. first)
    vim.cmd('close')
  end)

  step('ghost text shows after typing a word', function()
    vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
    feed('A1. Najemca zobowiązuje się')
    local text = H.ghost_after_words(buf, { ' płacić', ' czynsz', ' w', ' terminie', ' do' })
    H.log('# ghost text: ' .. vim.inspect(text))
    check(text, 'ghost text after one of five words')
    check(#notified == 0, 'still no message: ' .. vim.inspect(notified))
  end)
end

H.run(main, READY_MS + 120000)
