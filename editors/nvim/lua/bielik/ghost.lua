-- Ghost text: bielik.nvim's own trigger and rendering of LSP inline completions.
--
-- Neovim 0.12's vim.lsp.inline_completion waits a fixed 200 ms after the last keystroke before it
-- asks, never cancels the requests it no longer needs and shows answers that arrive for text that
-- has moved on. Here, as in llama.vim and copilot.lua: every edit cancels the request in flight
-- ($/cancelRequest) and restarts a short timer; an answer is shown only for the buffer and cursor
-- it was asked for; a suggestion stays on screen while the user types through it; accept all, a
-- word or a line; cycle through the items of one answer.

local M = {}

local api = vim.api
local METHOD = 'textDocument/inlineCompletion'
local DID_SHOW = 'textDocument/didShowCompletion'
local DID_PARTIALLY_ACCEPT = 'textDocument/didPartiallyAcceptCompletion'
local AUTOMATIC, INVOKED = 2, 1
local MARK = 1 -- one extmark per buffer, replaced in place

M.ns = api.nvim_create_namespace('bielik.ghost')
M.delay_ms = 20 -- after the last keystroke: the editor's debounce (the server's debounce_ms adds to it)

---@class bielik.GhostItem
---@field text string what the item inserts at its anchor
---@field row integer anchor row (0-based)
---@field col integer anchor byte column
---@field raw table the LSP InlineCompletionItem
---@field client_id integer

---@class bielik.GhostState
---@field timer uv.uv_timer_t
---@field augroup integer
---@field request? { client_id: integer, id: integer, tick: integer, row: integer, col: integer }
---@field items? bielik.GhostItem[]
---@field index integer
---@field shown table<bielik.GhostItem, true>

---@type table<integer, bielik.GhostState>
local states = {}

local function cursor(bufnr)
  local win = vim.fn.bufwinid(bufnr)
  local pos = api.nvim_win_get_cursor(win ~= -1 and win or 0)
  return pos[1] - 1, pos[2]
end

local function line_at(bufnr, row)
  return api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
end

local function client_for(bufnr)
  return vim.lsp.get_clients({ name = 'bielik', bufnr = bufnr, method = METHOD })[1]
end

function M.enabled(bufnr)
  return states[bufnr] ~= nil
end

local function cancel(s)
  local req = s.request
  s.request = nil
  local client = req and vim.lsp.get_client_by_id(req.client_id)
  if client then
    client:cancel_request(req.id)
  end
end

local function hide(bufnr)
  pcall(api.nvim_buf_del_extmark, bufnr, M.ns, MARK)
end

--- Forget the suggestion: stop the timer, cancel the request, hide the ghost text.
function M.clear(bufnr)
  local s = states[bufnr]
  if not s then
    return
  end
  s.timer:stop()
  cancel(s)
  s.items = nil
  hide(bufnr)
end

--- The part of an item still to insert at the cursor, if the text between its anchor and the
--- cursor is the item's beginning (the user typed it, or accepted it word by word).
local function remaining(bufnr, item)
  local row, col = cursor(bufnr)
  local _, newlines = item.text:gsub('\n', '')
  if row < item.row or row > item.row + newlines or (row == item.row and col < item.col) then
    return nil
  end
  local ok, lines = pcall(api.nvim_buf_get_text, bufnr, item.row, item.col, row, col, {})
  local typed = ok and table.concat(lines, '\n')
  if not typed or item.text:sub(1, #typed) ~= typed or #item.text == #typed then
    return nil
  end
  return item.text:sub(#typed + 1), typed
end

local function show_notification(bufnr, s, item)
  if s.shown[item] then
    return
  end
  s.shown[item] = true
  local client = vim.lsp.get_client_by_id(item.client_id)
  if client then
    client:notify(DID_SHOW, { item = item.raw })
  end
end

--- Draw items[index] at the cursor; false (and nothing drawn) when it no longer fits the text.
local function draw(bufnr, s)
  local item = s.items and s.items[s.index]
  local rest = item and remaining(bufnr, item)
  if not rest then
    hide(bufnr)
    return false
  end
  local lines = vim.split(rest, '\n', { plain = true })
  local virt_text = { { lines[1], 'BielikGhost' } }
  if #s.items > 1 then
    table.insert(virt_text, { (' (%d/%d)'):format(s.index, #s.items), 'BielikGhostHint' })
  end
  local virt_lines = {}
  for i = 2, #lines do
    virt_lines[#virt_lines + 1] = { { lines[i], 'BielikGhost' } }
  end
  local row, col = cursor(bufnr)
  api.nvim_buf_set_extmark(bufnr, M.ns, row, col, {
    id = MARK,
    virt_text = virt_text,
    virt_text_pos = 'inline',
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    hl_mode = 'combine',
  })
  show_notification(bufnr, s, item)
  return true
end

--- The first item from `index` on (in `step`s, wrapping) that still fits the text, drawn.
local function draw_from(bufnr, s, index, step)
  local n = #s.items
  for i = 0, n - 1 do
    s.index = (index - 1 + i * step) % n + 1
    if draw(bufnr, s) then
      return true
    end
  end
  s.items = nil
  return false
end

local function to_item(bufnr, client, raw, row, col)
  local text = raw.insertText
  if type(text) == 'table' then -- a snippet (StringValue): its text as it stands
    text = text.value
  end
  if type(text) ~= 'string' or text == '' then
    return nil
  end
  local r = raw.range
  if r and r.start then
    row = r.start.line
    col = vim.str_byteindex(line_at(bufnr, row), client.offset_encoding, r.start.character, false)
  end
  return { text = text, row = row, col = col, raw = raw, client_id = client.id }
end

local function on_result(bufnr, req, err, result)
  local s = states[bufnr]
  if not s or s.request ~= req then
    return -- cancelled or replaced by a newer request
  end
  s.request = nil
  local row, col = cursor(bufnr)
  if err or not result or api.nvim_get_current_buf() ~= bufnr or not api.nvim_get_mode().mode:match('^i')
      or vim.b[bufnr].changedtick ~= req.tick or row ~= req.row or col ~= req.col then
    return -- stale: the text or the cursor moved on since the request
  end
  local client = vim.lsp.get_client_by_id(req.client_id)
  local items = {}
  for _, raw in ipairs(client and (result.items or result) or {}) do
    items[#items + 1] = to_item(bufnr, client, raw, row, col)
  end
  s.items, s.shown = #items > 0 and items or nil, {}
  if s.items then
    draw_from(bufnr, s, 1, 1)
  else
    hide(bufnr)
  end
end

--- Ask the server now for the cursor's suggestions (`kind`: LSP InlineCompletionTriggerKind).
function M.request(bufnr, kind)
  local s = states[bufnr]
  local client = client_for(bufnr)
  if not s or not client or api.nvim_get_current_buf() ~= bufnr or not api.nvim_get_mode().mode:match('^i') then
    return
  end
  cancel(s)
  local win = api.nvim_get_current_win()
  local params = vim.lsp.util.make_position_params(win, client.offset_encoding)
  params.context = { triggerKind = kind or AUTOMATIC }
  local row, col = cursor(bufnr)
  local req = { client_id = client.id, tick = vim.b[bufnr].changedtick, row = row, col = col }
  local ok, id = client:request(METHOD, params, function(err, result)
    on_result(bufnr, req, err, result)
  end, bufnr)
  if ok and id then
    req.id = id
    s.request = req
  end
end

--- After an edit or a cursor move in insert mode: keep a suggestion the user is typing through,
--- else cancel what is in flight and ask again once typing pauses for `delay_ms`.
local function on_edit(bufnr)
  local s = states[bufnr]
  if not s then
    return
  end
  if s.items and draw(bufnr, s) then
    return
  end
  s.items = nil
  hide(bufnr)
  cancel(s)
  s.timer:stop()
  s.timer:start(M.delay_ms, 0, vim.schedule_wrap(function()
    M.request(bufnr, AUTOMATIC)
  end))
end

--- Ghost text on or off for a buffer.
function M.enable(bufnr, on)
  if on and not states[bufnr] then
    local s = { timer = assert(vim.uv.new_timer()), index = 1, shown = {} }
    s.augroup = api.nvim_create_augroup('bielik.ghost.' .. bufnr, { clear = true })
    states[bufnr] = s
    local function au(events, fn)
      api.nvim_create_autocmd(events, { group = s.augroup, buffer = bufnr, callback = function()
        fn(bufnr)
      end })
    end
    au({ 'InsertEnter', 'CursorMovedI', 'TextChangedI', 'TextChangedP' }, on_edit)
    au({ 'InsertLeave', 'BufLeave' }, M.clear)
    au({ 'BufUnload' }, function(b)
      M.enable(b, false)
    end)
  elseif not on and states[bufnr] then
    M.clear(bufnr)
    local s = states[bufnr]
    states[bufnr] = nil
    pcall(api.nvim_del_augroup_by_id, s.augroup)
    s.timer:close()
  end
end

--- Whether a suggestion is on screen in the buffer.
function M.visible(bufnr)
  return #api.nvim_buf_get_extmarks(bufnr, M.ns, 0, -1, {}) > 0
end

--- The ghost text on screen (nil when none), without the "(i/n)" hint.
function M.text(bufnr)
  local mark = api.nvim_buf_get_extmark_by_id(bufnr, M.ns, MARK, { details = true })
  if #mark == 0 then
    return nil
  end
  local parts = { mark[3].virt_text[1][1] }
  for _, line in ipairs(mark[3].virt_lines or {}) do
    parts[#parts + 1] = '\n' .. line[1][1]
  end
  return table.concat(parts)
end

--- The current item (its LSP form) and how many there are, or nil.
function M.current(bufnr)
  local s = states[bufnr]
  if s and s.items and M.visible(bufnr) then
    return s.items[s.index].raw, s.index, #s.items
  end
end

local PARTS = {
  all = function(rest)
    return rest
  end,
  word = function(rest)
    return rest:match('^%s*[^%s]+') or rest
  end,
  line = function(rest)
    return rest:match('^[^\n]*\n') or rest
  end,
}

--- Insert the suggestion, or its next word or line, at the cursor. The whole of it runs the
--- item's command (the server counts an accept); a part is a partial accept.
function M.accept(bufnr, how)
  local s = states[bufnr]
  local item = s and s.items and s.items[s.index]
  if not item then
    return false
  end
  local rest, typed = remaining(bufnr, item)
  if not rest then
    return false
  end
  local part = PARTS[how or 'all'](rest)
  local row, col = cursor(bufnr)
  local lines = vim.split(part, '\n', { plain = true })
  api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
  api.nvim_win_set_cursor(0, { row + #lines, (#lines == 1 and col or 0) + #lines[#lines] })
  local client = vim.lsp.get_client_by_id(item.client_id)
  if part == rest then
    s.items = nil
    hide(bufnr)
    if client and item.raw.command then
      client:exec_cmd(item.raw.command, { bufnr = bufnr })
    end
  elseif client then
    client:notify(DID_PARTIALLY_ACCEPT, {
      item = item.raw,
      acceptedLength = vim.str_utfindex(typed .. part, 'utf-16'),
    })
  end
  return true
end

--- Show the next (`step` 1) or previous (-1) item; with none shown, ask the server.
function M.select(bufnr, step)
  local s = states[bufnr]
  if not s then
    return
  end
  if s.items and M.visible(bufnr) then
    draw_from(bufnr, s, s.index + step, step)
  else
    M.request(bufnr, INVOKED)
  end
end

local function highlights()
  local function link(name, to)
    api.nvim_set_hl(0, name, { link = vim.fn.hlexists(to) == 1 and to or 'Comment', default = true })
  end
  link('BielikGhost', 'ComplHint')
  link('BielikGhostHint', 'ComplHintMore')
end
highlights()
api.nvim_create_autocmd('ColorScheme', {
  group = api.nvim_create_augroup('bielik.ghost', { clear = true }),
  callback = highlights,
})

return M
