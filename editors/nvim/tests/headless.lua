-- Headless end-to-end test: real Neovim 0.12 + bielik.nvim + the real bielik-lsp server.
--
--   nvim --headless -u NONE -i NONE -n -c 'luafile editors/nvim/tests/headless.lua'
--
-- (run from the repository root). The plugin is installed the plain packpath way (a pack/*/opt
-- link to editors/nvim, then :packadd). Environment: BIELIK_LSP_PYTHON (python with the server, default
-- .venv/bin/python), BIELIK_READY_TIMEOUT_MS. Exits 0 when every step passes, 1 otherwise; each
-- step prints "ok - ..." or "not ok - ..." on stderr (tests/harness.lua: typed keys go through
-- Neovim's main loop as a user's would).

local root = vim.fn.getcwd()
local python = os.getenv('BIELIK_LSP_PYTHON')
if not python or python == '' then
  python = root .. '/.venv/bin/python'
end
-- The target as a .gguf path (the embedded target's file): another spelling of the default, so
-- the server's echo shows that `target` arrived. Unset: the default spec.
local TARGET = os.getenv('BIELIK_TEST_TARGET') or 'embedded:gemma-3-270m'
local READY_MS = tonumber(os.getenv('BIELIK_READY_TIMEOUT_MS') or '') or 300000
local TEXT = {
  'W początkach roku 1878, kiedy świat polityczny zajmował się pokojem san-stefańskim, warszawscy kupcy tudzież inteligencja pewnej okolicy Krakowskiego Przedmieścia niemniej gorąco interesowała się przyszłością galanteryjnego sklepu pod firmą J. Mincel i S. Wokulski.',
  '',
  'W renomowanej jadłodajni, gdzie na wieczorną przekąskę zbierali się właściciele składów',
}

package.path = root .. '/editors/nvim/tests/?.lua;' .. package.path
local H = require('harness')
local log, step, check, wait_for, feed, buffer_text = H.log, H.step, H.check, H.wait_for, H.feed, H.buffer_text

local function ghost_text(buf)
  return require('bielik.ghost').text(buf)
end

local function main()
  H.packadd(root)
  local bielik = require('bielik')
  vim.env.PYTHONPATH = root
  local buf, uri

  step('setup{} and the server starts for a markdown buffer', function()
    check(bielik.has_ghost_text(), 'this Neovim has ghost text (0.12+)')
    bielik.setup({
      cmd = { python, '-m', 'app.cli', 'serve' },
      -- top-level server settings, each with a value the server's echo can tell from its default
      preset = 'embedded',
      target = TARGET,
      drafter_model = 'embedded:gemma-3-270m', -- not loaded: the drafter is lookup
      seed = 7,
      dtype = 'float32',
      languages = { 'markdown' },
      globs = { '*.md' },
      inline_max_tokens = 12,
      continue_max_tokens = 12,
      debounce_ms = 0,
      time_budget_ms = 15000,
      suggestion_ms = 15000,
      settings = { drafter = 'lookup' },
    })
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, 'p')
    vim.cmd.edit(dir .. '/tekst.md')
    buf = vim.api.nvim_get_current_buf()
    uri = vim.uri_from_bufnr(buf)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, TEXT)
    check(vim.bo[buf].filetype == 'markdown', 'filetype markdown, got ' .. vim.bo[buf].filetype)
    wait_for('the client to attach', 20000, function()
      return #bielik.clients(buf) == 1
    end)
    local client = bielik.clients(buf)[1]
    check(client.config.init_options.inline_max_tokens == 12, 'init_options carry setup{} settings')
    wait_for('bielik/status ready', READY_MS, function()
      return bielik.state.model == 'ready' or bielik.state.model == 'error'
    end)
    check(bielik.state.model == 'ready', 'model state: ' .. tostring(bielik.state.model) .. ' ' .. tostring(bielik.state.message))
    check(bielik.ghost_enabled(buf), 'ghost text enabled for the buffer')
    check(bielik.statusline(buf):match('^Bielik'), 'statusline: ' .. bielik.statusline(buf))
  end)
  if H.failures > 0 then
    return
  end

  local ghost
  step('ghost text appears while typing at the end of the text', function()
    vim.api.nvim_win_set_cursor(0, { #TEXT, #TEXT[#TEXT] })
    feed('A')
    wait_for('insert mode', 5000, function()
      return vim.api.nvim_get_mode().mode == 'i'
    end)
    ghost = wait_for('ghost text', 60000, function()
      return ghost_text(buf)
    end)
    log('# ghost text: ' .. vim.inspect(ghost))
    check(vim.trim(ghost) ~= '', 'non-empty ghost text')
    check(not ghost:find('\239\191\189', 1, true), 'no U+FFFD')
    local f = bielik.file_status(buf)
    check(f and f.speculation == 'auto', 'per-file status: ' .. vim.inspect(f))
  end)

  step('<C-Right> accepts the first word; the server hears about it', function()
    check(ghost, 'a ghost text to accept')
    local before = buffer_text(buf)
    local word = ghost:match('^%s*[^%s]+')
    feed('<C-Right>')
    wait_for('the word in the buffer', 5000, function()
      return buffer_text(buf) ~= before
    end)
    check(buffer_text(buf) == before .. word, ('added %q, want %q'):format(buffer_text(buf):sub(#before + 1), word))
    check(vim.api.nvim_get_mode().mode == 'i', 'still in insert mode')
    local report
    wait_for('the server to count it', 10000, function()
      bielik.stats({ quiet = true, on_done = function(x)
        report = x
      end })
      local f = report and report.files[uri] or {}
      -- a one-word suggestion taken whole is a full accept (the item's command runs)
      return word == ghost and (f.suggestions_accepted or 0) >= 1
        or (f.partially_accepted or 0) >= 1 and (f.accepted_chars or 0) >= vim.str_utfindex(word, 'utf-16')
    end)
    pcall(wait_for, 'the old ghost text to go', 2000, function()
      return ghost_text(buf) == nil
    end)
    ghost = wait_for('ghost text after the word', 60000, function()
      return ghost_text(buf)
    end)
    log('# next ghost text: ' .. vim.inspect(ghost))
  end)

  step('<Tab> accepts the ghost text', function()
    check(ghost, 'a ghost text to accept')
    local before = buffer_text(buf)
    feed('<Tab>')
    wait_for('the suggestion in the buffer', 5000, function()
      return buffer_text(buf) ~= before
    end)
    local after = buffer_text(buf)
    check(vim.startswith(after, before), 'text appended at the cursor')
    local added = after:sub(#before + 1)
    log('# accepted: ' .. vim.inspect(added))
    check(added:sub(-#ghost) == ghost or added == ghost, ('accepted %q, ghost was %q'):format(added, ghost))
    feed('<Esc>')
    wait_for('normal mode', 5000, function()
      return vim.api.nvim_get_mode().mode == 'n'
    end)
  end)

  step(':BielikContinue streams edits into the buffer', function()
    local before = buffer_text(buf)
    local result
    vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
    vim.cmd('normal! $')
    bielik.continue({ max_tokens = 8, on_done = function(r)
      result = r
    end })
    wait_for('continueDocument result', 60000, function()
      return result
    end)
    log(('# continued: %s (%s)'):format(vim.inspect(result.text), result.stopReason))
    check(buffer_text(buf) == before .. result.text,
      ('buffer = before .. result.text; got tail %q'):format(buffer_text(buf):sub(#before - 20)))
    check(result.text ~= '' or result.stopReason ~= 'edited', 'stop reason: ' .. result.stopReason)
  end)

  step(':BielikToggleSpeculation sets and cycles the file mode', function()
    local r
    vim.cmd('BielikToggleSpeculation off')
    wait_for('toggle off', 10000, function()
      local f = bielik.file_status(buf)
      return f and f.speculation == 'off'
    end)
    check(bielik.statusline(buf):find('spec:off', 1, true), 'statusline: ' .. bielik.statusline(buf))
    bielik.toggle_speculation(nil, { on_done = function(x)
      r = x
    end })
    wait_for('toggle cycle', 10000, function()
      return r
    end)
    check(r.speculation == 'on', 'off cycles to on, got ' .. tostring(r.speculation))
    check(r.reason:find('on', 1, true), 'reason: ' .. r.reason)
  end)

  step(':BielikStats reports this file', function()
    local report
    bielik.stats({ quiet = true, on_done = function(x)
      report = x
    end })
    wait_for('stats', 10000, function()
      return report
    end)
    check(report.state == 'ready', 'state ready')
    check((report.files[uri] or {}).requests >= 1, 'requests counted: ' .. vim.inspect(report.files[uri]))
    -- <Tab> above: Neovim ran the command the server attached to the item
    check((report.files[uri].suggestions_accepted or 0) >= 1, 'the accept was counted: ' .. vim.inspect(report.files[uri]))
    local got = report.config
    check(got.inlineMaxTokens == 12, 'server got setup{} settings')
    local want = { target = TARGET, drafterModel = 'embedded:gemma-3-270m', seed = 7, dtype = 'float32',
      drafter = 'lookup' }
    for key, value in pairs(want) do
      check(got[key] == value, ('server got %s = %s, want %s'):format(key, vim.inspect(got[key]), vim.inspect(value)))
    end
    check(vim.deep_equal(got.languages, { 'markdown' }) and vim.deep_equal(got.globs, { '*.md' }),
      'server got languages/globs as lists: ' .. vim.inspect({ got.languages, got.globs }))

    local lines = bielik.format_stats(report, uri)
    check(lines[3]:find('This file', 1, true), 'formatted: ' .. vim.inspect(lines))
    vim.cmd('BielikStats')
    wait_for('stats window', 10000, function()
      return vim.api.nvim_buf_get_name(0):find('bielik://stats', 1, true)
    end)
    vim.cmd('close')
  end)

  step('setup{} refuses a string for a list setting and keeps the settings', function()
    local notified
    local notify = vim.notify
    vim.notify = function(msg)
      notified = msg
    end
    bielik.setup(vim.tbl_extend('force', bielik.config, { globs = '*.md' }))
    vim.notify = notify
    check(notified and notified:find('globs must be a list of strings', 1, true), 'message: ' .. tostring(notified))
    check(vim.deep_equal(bielik.server_settings().globs, { '*.md' }), 'globs kept')
  end)

  step(':BielikToggle turns ghost text off for this buffer only', function()
    vim.cmd('BielikToggle')
    check(not bielik.ghost_enabled(buf), 'ghost text off')
    check(bielik.statusline(buf):find('ghost off', 1, true), 'statusline: ' .. bielik.statusline(buf))
    vim.cmd('BielikToggle')
    check(bielik.ghost_enabled(buf), 'ghost text on again')
  end)
end

H.run(main, READY_MS + 180000)
