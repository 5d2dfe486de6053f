-- bielik.nvim: the bielik-lsp language server in Neovim.
--
-- Starts the server through vim.lsp for the configured filetypes, shows its inline completions as
-- ghost text (bielik.ghost; or Neovim's vim.lsp.inline_completion with ghost_text = 'native'),
-- and adds :BielikContinue, :BielikToggleSpeculation, :BielikStats, :BielikToggle and a
-- statusline component. Two ways in, the same client: `vim.lsp.enable('bielik')` (lsp/bielik.lua
-- returns M.lsp_config()) or setup{} (its own FileType autocmd). See :help bielik.

local ghost = require('bielik.ghost')

local M = {}

local STATUS = 'bielik/status'
local COMMANDS = {
  continue = 'bielik.continueDocument',
  toggle = 'bielik.toggleSpeculation',
  stats = 'bielik.showStats',
}
M.COMMANDS = COMMANDS

--- Server settings (lua/bielik/settings.lua, generated from the server's schema) with the
--- server's defaults; vim.NIL: the server decides. Only the ones set in setup{} (at top level or
--- under `settings`) are sent.
M.server_defaults = require('bielik.settings')

M.defaults = {
  cmd = { 'bielik-lsp', 'serve' },
  -- Neovim filetypes; the server sees them as LSP language ids (see language_ids).
  filetypes = { 'markdown', 'text', 'tex', 'plaintex' },
  language_ids = { text = 'plaintext', tex = 'latex', plaintex = 'latex' },
  root_markers = { '.git' },
  ghost_text = true, -- Neovim 0.12+: true (bielik.ghost), 'native' (vim.lsp.inline_completion), false
  keymaps = { -- insert mode; each falls back to the key itself when no ghost text is shown
    accept = '<Tab>', -- accept the ghost text
    accept_word = '<C-Right>', -- its next word only
    accept_line = '<S-Tab>', -- its next line only
    next = '<M-]>', -- next / previous suggestion (without one: ask for one now)
    prev = '<M-[>',
  },
  settings = {}, -- server settings, same keys as M.server_defaults (also accepted at top level)
}

M.config = vim.deepcopy(M.defaults)
M.state = { model = nil, message = nil, files = {} } -- from bielik/status
local warned_old = false

local function has_ghost_text()
  return vim.lsp.inline_completion ~= nil and vim.fn.has('nvim-0.12') == 1
end
M.has_ghost_text = has_ghost_text

local LISTS = { languages = true, globs = true }

--- The settings object for the server: setup{}'s server keys (top level wins over `settings`),
--- unset ones left out. Raises on a list setting that is not a list of strings.
function M.server_settings()
  local out = {}
  local function put(key, value)
    if value == nil or value == vim.NIL then
      return
    end
    if LISTS[key] and not (type(value) == 'table' and vim.islist(value)
        and #vim.tbl_filter(function(v) return type(v) ~= 'string' end, value) == 0) then
      error(('bielik: %s must be a list of strings, not %s'):format(key, vim.inspect(value)), 0)
    end
    out[key] = value
  end
  for key, value in pairs(M.config.settings or {}) do
    put(key, value)
  end
  for key in pairs(M.server_defaults) do
    put(key, M.config[key])
  end
  return next(out) and out or vim.empty_dict() -- an empty Lua table would go out as a JSON array
end

--- The client configuration, from the defaults or what setup{} set: lsp/bielik.lua returns it for
--- vim.lsp.enable('bielik'), and setup{}'s own start uses it. Ghost text and keymaps come from the
--- LspAttach autocmd (M.init), so they work either way and survive an on_attach of the user's.
function M.lsp_config()
  M.init()
  local ids = M.config.language_ids or {}
  return {
    cmd = M.config.cmd,
    filetypes = M.config.filetypes,
    root_markers = M.config.root_markers,
    init_options = M.server_settings(), -- an object, also when empty (see server_settings)
    settings = { bielik = M.server_settings() },
    get_language_id = function(_, filetype)
      return ids[filetype] or filetype
    end,
    handlers = { [STATUS] = M._on_status },
  }
end

--- Whether vim.lsp.enable('bielik') starts the server (then setup{} leaves that to it).
local function enabled()
  return vim.lsp.is_enabled ~= nil and vim.lsp.is_enabled('bielik')
end

--- setup{}: plugin options plus any server setting (see :help bielik-settings).
function M.setup(opts)
  opts = opts or {}
  if vim.fn.has('nvim-0.11') == 0 then
    local v = vim.version()
    vim.notify(('bielik: needs Neovim 0.11+ (0.12+ for ghost text); this is %d.%d.%d'):format(v.major, v.minor, v.patch),
      vim.log.levels.ERROR)
    return
  end
  local unknown = {}
  for key in pairs(opts) do
    if M.defaults[key] == nil and M.server_defaults[key] == nil then
      table.insert(unknown, key)
    end
  end
  if #unknown > 0 then
    vim.notify('bielik: unknown setup option(s): ' .. table.concat(unknown, ', '), vim.log.levels.WARN)
  end
  local config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  for key, value in pairs(opts) do -- lists replace the defaults rather than merge with them
    if type(value) == 'table' and vim.islist(value) then
      config[key] = value
    end
  end
  local previous = M.config
  M.config = config
  local ok, err = pcall(M.server_settings)
  if not ok then -- a bad setting: say so once, keep what was there
    M.config = previous
    vim.notify(err, vim.log.levels.ERROR)
    return
  end
  M._setup_done = true
  M.init()
  M._autocmds()
  if enabled() then -- lsp/bielik.lua reads M.config again: drop Neovim's resolved copy
    vim.lsp.config('bielik', {})
  end
  -- Buffers already open (lazy loading on a FileType event): attach them now.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.config.filetypes, vim.bo[buf].filetype) then
      M.attach(buf)
    end
  end
  -- A running server gets the new settings at once.
  for _, client in ipairs(M.clients()) do
    client:notify('workspace/didChangeConfiguration', { settings = { bielik = M.server_settings() } })
  end
end

function M.clients(bufnr)
  return vim.lsp.get_clients({ name = 'bielik', bufnr = bufnr })
end

local function client_for(bufnr)
  return M.clients(bufnr)[1]
end

local function redraw()
  pcall(vim.cmd, 'redrawstatus')
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'BielikStatus', modeline = false })
end

function M._on_status(_, payload)
  if type(payload) ~= 'table' then
    return
  end
  M.state.model = payload.state
  M.state.message = payload.message
  if payload.uri then
    local f = M.state.files[payload.uri] or {}
    for _, key in ipairs({ 'speculation', 'speculationSource', 'drafter', 'reason', 'policyReasons',
      'acceptanceRate', 'tokensPerSecond', 'prefilledTokens' }) do
      if payload[key] ~= nil then
        f[key] = payload[key]
      end
    end
    M.state.files[payload.uri] = f
  end
  -- Errors reach the user through the server's window/showMessage; no second notice here.
  vim.schedule(redraw)
end

local function root_dir(bufnr)
  local ok, root = pcall(vim.fs.root, bufnr, M.config.root_markers)
  return (ok and root) or vim.fn.getcwd()
end

--- Start (or reuse) the server for a buffer.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.b[bufnr].bielik_disabled or vim.bo[bufnr].buftype ~= '' or enabled() then
    return nil
  end
  local cmd = M.config.cmd
  if type(cmd) == 'table' and vim.fn.executable(cmd[1]) ~= 1 then
    vim.notify(('bielik: %s is not executable; set cmd in require("bielik").setup{}'):format(cmd[1]), vim.log.levels.ERROR)
    return nil
  end
  local config = M.lsp_config()
  config.name, config.root_dir = 'bielik', root_dir(bufnr)
  return vim.lsp.start(config, { bufnr = bufnr })
end

local ACCEPTS = {
  accept = { 'all', 'Bielik: accept the suggestion' },
  accept_word = { 'word', 'Bielik: accept the next word of the suggestion' },
  accept_line = { 'line', 'Bielik: accept the next line of the suggestion' },
}

--- Keys for bielik.ghost: an accept key is itself where no ghost text is shown.
local function ghost_keymaps(bufnr, km)
  for name, spec in pairs(ACCEPTS) do
    local key = km[name]
    if key then
      vim.keymap.set('i', key, function()
        if not ghost.visible(bufnr) then
          return key
        end
        return ("<Cmd>lua require('bielik.ghost').accept(%d, '%s')<CR>"):format(bufnr, spec[1])
      end, { buffer = bufnr, expr = true, desc = spec[2] })
    end
  end
  for name, step in pairs({ next = 1, prev = -1 }) do
    if km[name] then
      vim.keymap.set('i', km[name], function()
        ghost.select(bufnr, step)
      end, { buffer = bufnr, desc = ('Bielik: %s suggestion'):format(step > 0 and 'next' or 'previous') })
    end
  end
end

--- Accept the first word of vim.lsp.inline_completion's ghost text (with its leading space); the
--- server hears a partial accept. Returns false when nothing is shown.
local function native_accept_word(bufnr)
  return vim.lsp.inline_completion.get({ bufnr = bufnr, on_accept = function(item)
    local text = item.insert_text
    if type(text) ~= 'string' then
      return
    end
    local word = text:match('^%s*[^%s]+') or text
    local lines = vim.split(word, '\n')
    local r = item.range
    local row, col
    if r then
      row, col = r.start.row, r.start.col
      vim.api.nvim_buf_set_text(bufnr, row, col, r.end_.row, r.end_.col, lines)
    else
      local cursor = vim.api.nvim_win_get_cursor(vim.fn.bufwinid(bufnr))
      row, col = cursor[1] - 1, cursor[2]
      vim.api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
    end
    vim.api.nvim_win_set_cursor(vim.fn.bufwinid(bufnr), { row + #lines, (#lines == 1 and col or 0) + #lines[#lines] })
    local client = vim.lsp.get_client_by_id(item.client_id)
    if not client then
      return
    end
    if word == text then -- the whole suggestion: an accept like <Tab>'s
      if item.command then
        client:exec_cmd(item.command, { bufnr = bufnr })
      end
      return
    end
    client:notify('textDocument/didPartiallyAcceptCompletion', {
      item = { insertText = text, command = item.command },
      acceptedLength = vim.str_utfindex(word, 'utf-16'),
    })
  end })
end

--- Keys for ghost_text = 'native' (vim.lsp.inline_completion): accept, accept word, next, prev.
local function native_keymaps(bufnr, km)
  local function fallback(key, accept)
    return function()
      if not accept(bufnr) then
        return vim.api.nvim_replace_termcodes(key, true, false, true)
      end
    end
  end
  if km.accept then
    vim.keymap.set('i', km.accept, fallback(km.accept, function(b)
      return vim.lsp.inline_completion.get({ bufnr = b })
    end), { buffer = bufnr, expr = true, desc = ACCEPTS.accept[2] })
  end
  if km.accept_word then
    vim.keymap.set('i', km.accept_word, fallback(km.accept_word, native_accept_word),
      { buffer = bufnr, expr = true, desc = ACCEPTS.accept_word[2] })
  end
  for name, count in pairs({ next = 1, prev = -1 }) do
    if km[name] then
      vim.keymap.set('i', km[name], function()
        vim.lsp.inline_completion.select({ bufnr = bufnr, count = count })
      end, { buffer = bufnr, desc = ('Bielik: %s suggestion'):format(count > 0 and 'next' or 'previous') })
    end
  end
end

function M._on_attach(client, bufnr)
  if M.config.ghost_text and not vim.b[bufnr].bielik_ghost_off then
    M.ghost_text(bufnr, true)
  end
  if has_ghost_text() then
    local keymaps = M.config.ghost_text == 'native' and native_keymaps or ghost_keymaps
    keymaps(bufnr, M.config.keymaps or {})
  end
end

--- Ghost text on/off for a buffer (Neovim 0.12+).
function M.ghost_text(bufnr, enable)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not has_ghost_text() then
    if not warned_old then
      warned_old = true
      local v = vim.version()
      vim.notify(('bielik: ghost text needs Neovim 0.12+; this is %d.%d.%d. '
        .. ':BielikContinue, :BielikToggleSpeculation and :BielikStats still work.'):format(v.major, v.minor, v.patch),
        vim.log.levels.WARN)
    end
    return false
  end
  vim.b[bufnr].bielik_ghost_off = not enable
  if M.config.ghost_text == 'native' then
    vim.lsp.inline_completion.enable(enable, { bufnr = bufnr })
  else
    ghost.enable(bufnr, enable)
  end
  return true
end

--- Whether ghost text is on for a buffer.
function M.ghost_enabled(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if M.config.ghost_text == 'native' then
    return vim.lsp.inline_completion.is_enabled({ bufnr = bufnr })
  end
  return ghost.enabled(bufnr)
end

--- :BielikToggle: ghost text on/off for the current buffer.
function M.toggle_buffer(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local on = not vim.b[bufnr].bielik_ghost_off
  if M.ghost_text(bufnr, not on) then
    vim.notify('bielik: ghost text ' .. (on and 'off' or 'on') .. ' for this buffer')
  end
  redraw()
  return not on
end

local function require_client(bufnr)
  local client = client_for(bufnr)
  if not client then
    vim.notify('bielik: the server is not attached to this buffer (filetype ' .. vim.bo[bufnr].filetype .. ')',
      vim.log.levels.WARN)
  end
  return client
end

--- Send workspace/executeCommand; `on_result(result)` runs on success, errors are shown.
local function execute(client, bufnr, command, args, on_result)
  local ok, id = client:request('workspace/executeCommand', { command = command, arguments = { args } },
    function(err, result)
      if err then
        if err.code ~= -32800 then
          vim.notify('bielik: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        end
      elseif on_result then
        on_result(result)
      end
    end, bufnr)
  return ok and id or nil
end

--- The LSP position after the character under the cursor (normal mode) or at it (insert mode).
function M.cursor_position(bufnr, encoding)
  local win = vim.fn.bufwinid(bufnr)
  local row, col = unpack(vim.api.nvim_win_get_cursor(win ~= -1 and win or 0))
  local line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ''
  if not vim.api.nvim_get_mode().mode:match('^i') and #line > 0 then
    col = math.min(#line, col + vim.str_utf_end(line, col + 1) + 1)
  end
  local ok, character = pcall(vim.str_utfindex, line, encoding or 'utf-16', col, false)
  if not ok then -- Neovim 0.10: str_utfindex(line, index) returns utf-32, utf-16
    local _, u16 = vim.str_utfindex(line, col)
    character = u16
  end
  return { line = row - 1, character = character }
end

--- The buffer a command acts on, and its client (nil, after a warning, when none is attached).
local function command_target(opts)
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  return bufnr, require_client(bufnr)
end

--- :BielikContinue [max_tokens]: write on at the cursor (streamed edits, stops on your typing).
function M.continue(opts)
  opts = opts or {}
  local bufnr, client = command_target(opts)
  if not client then
    return nil
  end
  local args = { uri = vim.uri_from_bufnr(bufnr), position = opts.position or M.cursor_position(bufnr, client.offset_encoding) }
  if opts.max_tokens then
    args.maxTokens = opts.max_tokens
  end
  M.state.continuing = true
  return execute(client, bufnr, COMMANDS.continue, args, function(result)
    M.state.continuing = false
    M.state.last_continue = result
    local msg = result.text == '' and ('bielik: nothing added (%s)'):format(result.stopReason)
      or ('bielik: added %d characters (%s)'):format(vim.fn.strchars(result.text), result.stopReason)
    vim.notify(msg)
    if opts.on_done then
      opts.on_done(result)
    end
  end)
end

--- :BielikToggleSpeculation [on|off|auto]: without an argument, cycles auto -> off -> on.
function M.toggle_speculation(mode, opts)
  opts = opts or {}
  local bufnr, client = command_target(opts)
  if not client then
    return nil
  end
  local args = { uri = vim.uri_from_bufnr(bufnr) }
  if mode and mode ~= '' then
    args.mode = mode
  end
  return execute(client, bufnr, COMMANDS.toggle, args, function(result)
    local f = M.state.files[result.uri] or {}
    f.speculation, f.reason, f.drafter, f.speculationSource = result.speculation, result.reason, result.drafter, 'toggle'
    M.state.files[result.uri] = f
    vim.notify(('bielik: speculation %s for this file (%s)'):format(result.speculation, result.reason))
    redraw()
    if opts.on_done then
      opts.on_done(result)
    end
  end)
end

local function pct(x)
  return ('%d%%'):format(math.floor((tonumber(x) or 0) * 100 + 0.5))
end

--- bielik.showStats as lines of text.
function M.format_stats(report, uri)
  local lines = { ('Bielik statistics — model %s%s'):format(tostring(report.state),
    (type(report.error) == 'string' and report.error ~= '') and (' (error: ' .. report.error .. ')') or '') }
  local function block(title, c)
    if type(c) ~= 'table' then
      return
    end
    table.insert(lines, '')
    table.insert(lines, title)
    table.insert(lines, ('  requests %d, suggestions %d (cache hits %d), superseded %d'):format(
      c.requests or 0, c.suggestions or 0, c.cache_hits or 0, c.superseded or 0))
    table.insert(lines, ('  generated %d tokens, prefilled %d of %d prompt tokens'):format(
      c.generated_tokens or 0, c.prefilled_tokens or 0, c.prompt_tokens or 0))
    table.insert(lines, ('  drafted %d, accepted %d (acceptance %s), %.1f tokens/s, %.1f characters/s'):format(
      c.drafted or 0, c.accepted or 0, pct(c.acceptance_rate), tonumber(c.tokens_per_second) or 0,
      tonumber(c.chars_per_second) or 0))
    if c.speculation then
      table.insert(lines, ('  speculation %s (%s), drafter %s: %s'):format(c.speculation, c.source or 'default',
        c.drafter ~= '' and c.drafter or '-', c.reason ~= '' and c.reason or '-'))
      if type(c.policy_reasons) == 'table' and #c.policy_reasons > 0 then
        table.insert(lines, '  policy: ' .. table.concat(c.policy_reasons, '; '))
      end
    end
  end
  local files = type(report.files) == 'table' and report.files or {}
  if uri then
    block('This file (' .. uri .. ')', files[uri] or {})
  else
    for u, c in pairs(files) do
      block(u, c)
    end
  end
  block('Session', report.session)
  return lines
end

--- :BielikStats: statistics for this file and the session in a scratch buffer.
function M.stats(opts)
  opts = opts or {}
  local bufnr, client = command_target(opts)
  if not client then
    return nil
  end
  local uri = vim.uri_from_bufnr(bufnr)
  return execute(client, bufnr, COMMANDS.stats, { uri = uri }, function(report)
    M.state.last_stats = report
    if opts.on_done then
      opts.on_done(report)
      if opts.quiet then
        return
      end
    end
    local lines = M.format_stats(report, uri)
    vim.list_extend(lines, { '', 'Raw:' })
    vim.list_extend(lines, vim.split(vim.inspect(report), '\n'))
    vim.cmd('botright new')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = 'nofile', 'wipe', false
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    pcall(vim.api.nvim_buf_set_name, buf, 'bielik://stats')
  end)
end

--- Statusline component: '' when the buffer has no bielik server, else e.g.
--- "Bielik ready spec:auto 62% 14.2t/s" (see :help bielik-statusline).
function M.statusline(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if #M.clients(bufnr) == 0 then
    return ''
  end
  local state = M.state.model or 'starting'
  local parts = { 'Bielik' }
  if state ~= 'ready' then
    table.insert(parts, state)
  else
    local f = M.state.files[vim.uri_from_bufnr(bufnr)] or {}
    table.insert(parts, 'spec:' .. (f.speculation or 'auto'))
    if (tonumber(f.acceptanceRate) or 0) > 0 then
      table.insert(parts, pct(f.acceptanceRate))
    end
    if (tonumber(f.tokensPerSecond) or 0) > 0 then
      table.insert(parts, ('%.1ft/s'):format(f.tokensPerSecond))
    end
  end
  if vim.b[bufnr].bielik_ghost_off then
    table.insert(parts, '(ghost off)')
  end
  return table.concat(parts, ' ')
end

--- The per-file state the last bielik/status gave (speculation, reason, acceptanceRate, ...).
function M.file_status(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return M.state.files[vim.uri_from_bufnr(bufnr)]
end

local group = vim.api.nvim_create_augroup('bielik', { clear = true })

--- The user commands and the LspAttach autocmd that gives a bielik client's buffers ghost text
--- and keymaps. Idempotent; plugin/bielik.lua, setup{} and lsp/bielik.lua call it, so a plugin
--- put on the runtime path after startup works too.
function M.init()
  if M._initialized then
    return
  end
  M._initialized = true
  require('bielik.commands')
  vim.api.nvim_create_autocmd('LspAttach', {
    group = vim.api.nvim_create_augroup('bielik.attach', { clear = true }),
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == 'bielik' then
        M._on_attach(client, ev.buf)
      end
    end,
  })
end

function M._autocmds()
  vim.api.nvim_clear_autocmds({ group = group })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(ev)
      M.attach(ev.buf)
    end,
  })
end

return M
