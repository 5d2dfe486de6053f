-- bielik.nvim's ghost text against tests/editor_stub.py, a small LSP server that answers every
-- inline completion with the same three items: cycling, accept all / word / line and what the
-- server hears about each, typing through a suggestion, cancelled and stale requests.
--
--   nvim --headless -u NONE -i NONE -n -c 'luafile editors/nvim/tests/ghost_stub.lua'
--
-- from the repository root (BIELIK_LSP_PYTHON: the python to run the stub with).

local root = vim.fn.getcwd()
package.path = root .. '/editors/nvim/tests/?.lua;' .. package.path
local H = require('harness')
local check, step, wait_for, feed = H.check, H.step, H.wait_for, H.feed

local python = os.getenv('BIELIK_LSP_PYTHON') or 'python3'
local ITEMS = { ' pierwsza propozycja, dalej', ' druga propozycja.', ' trzecia\ni czwarta linia' }

local function main()
  H.packadd(root)
  local bielik = require('bielik')
  local ghost = require('bielik.ghost')
  local buf, client

  --- What the stub received, by method.
  local function received(method)
    local out
    client:request('stub/received', {}, function(_, result)
      out = result and result.received or {}
    end, buf)
    wait_for('stub/received', 5000, function()
      return out
    end)
    return vim.tbl_filter(function(m)
      return method == nil or m.method == method
    end, out)
  end

  local function shown(text, index)
    return wait_for(('ghost text %q'):format(text), 5000, function()
      local _, i = ghost.current(buf)
      return ghost.text(buf) == text and (index == nil or i == index)
    end)
  end

  local function insert_at_end()
    feed('<Esc>')
    wait_for('normal mode', 2000, function()
      return vim.api.nvim_get_mode().mode == 'n'
    end)
    feed('A')
  end

  step('the stub server attaches; ghost text shows the first of three items', function()
    bielik.setup({ cmd = { python, '-m', 'tests.editor_stub' } })
    vim.cmd.edit(vim.fn.tempname() .. '.md')
    buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'Umowa najmu' })
    client = wait_for('the client', 10000, function()
      return bielik.clients(buf)[1]
    end)
    check(bielik.ghost_enabled(buf), 'ghost text on')
    insert_at_end()
    shown(ITEMS[1], 1)
    local mark = vim.api.nvim_buf_get_extmark_by_id(buf, ghost.ns, 1, { details = true })
    check(mark[3].virt_text[2][1] == ' (1/3)', 'the hint says 1/3: ' .. vim.inspect(mark[3].virt_text))
  end)

  step('<M-]> and <M-[> cycle through the items, wrapping', function()
    feed('<M-]>')
    shown(ITEMS[2], 2)
    feed('<M-]>')
    shown(' trzecia\ni czwarta linia', 3)
    feed('<M-]>')
    shown(ITEMS[1], 1)
    feed('<M-[>')
    shown(ITEMS[3], 3)
    check(#received('textDocument/didShowCompletion') >= 3, 'didShowCompletion for each item shown')
  end)

  step('typing through an item keeps it on screen without asking again; cycling skips items that no longer fit', function()
    feed('<M-[>')
    shown(ITEMS[2], 2)
    local asked = #received('textDocument/inlineCompletion')
    feed(' dr')
    shown('uga propozycja.', 2)
    feed('<M-]>')
    H.sleep(100)
    check(ghost.text(buf) == 'uga propozycja.', 'only the second item fits " dr": ' .. tostring(ghost.text(buf)))
    check(#received('textDocument/inlineCompletion') == asked, 'no new request while typing through')
  end)

  step('<C-Right> accepts the next word: a partial accept of that item', function()
    feed('<C-Right>')
    wait_for('the word', 2000, function()
      return H.buffer_text(buf) == 'Umowa najmu druga'
    end)
    shown(' propozycja.', 2)
    local partial = received('textDocument/didPartiallyAcceptCompletion')
    check(#partial == 1, 'one partial accept: ' .. vim.inspect(partial))
    local p = partial[1].params
    check(p.item.insertText == ITEMS[2] and p.item.command.arguments[2]:match('%-1$'), 'the second item: ' .. vim.inspect(p))
    check(p.acceptedLength == #' druga', 'acceptedLength counts typed and accepted text: ' .. p.acceptedLength)
  end)

  step('<Tab> accepts the rest: the item\'s command runs', function()
    feed('<Tab>')
    wait_for('the rest', 2000, function()
      return H.buffer_text(buf) == 'Umowa najmu druga propozycja.'
    end)
    local commands = received('workspace/executeCommand')
    check(#commands == 1 and commands[1].params.command == 'bielik.accepted', vim.inspect(commands))
    check(commands[1].params.arguments[2]:match('%-1$'), 'the second item: ' .. vim.inspect(commands[1].params))
    shown(ITEMS[1], 1) -- the next suggestion, asked for after the accept
  end)

  step('<S-Tab> accepts a line at a time', function()
    feed('<M-[>')
    shown(ITEMS[3], 3)
    feed('<S-Tab>')
    wait_for('the first line', 2000, function()
      return H.buffer_text(buf) == 'Umowa najmu druga propozycja. trzecia\n'
    end)
    check(vim.api.nvim_win_get_cursor(0)[1] == 2, 'the cursor on the new line')
    shown('i czwarta linia', 3)
    local partial = received('textDocument/didPartiallyAcceptCompletion')
    check(#partial == 2 and partial[2].params.acceptedLength == #' trzecia\n', vim.inspect(partial[2]))
    feed('<S-Tab>')
    wait_for('the last line', 2000, function()
      return H.buffer_text(buf) == 'Umowa najmu druga propozycja. trzecia\ni czwarta linia'
    end)
    check(#received('workspace/executeCommand') == 2, 'the last line is the whole rest: an accept')
  end)

  step('an edit cancels the request in flight', function()
    feed('<CR>slow')
    wait_for('a request for "slow"', 5000, function()
      local reqs = received('textDocument/inlineCompletion')
      return reqs[#reqs].params.position.character == 4
    end)
    local cancels = #received('$/cancelRequest')
    feed('ly')
    shown(ITEMS[1], 1)
    check(#received('$/cancelRequest') > cancels, 'the slow request was cancelled: ' .. vim.inspect(vim.tbl_map(function(m) return m.method end, received(nil) )))
    check(H.buffer_text(buf):sub(-6) == 'slowly', 'text: ' .. H.buffer_text(buf))
  end)

  step('a late answer for text that has moved on is dropped, not drawn over the current one', function()
    feed('<CR>deaf')
    wait_for('a request for "deaf"', 5000, function()
      local reqs = received('textDocument/inlineCompletion')
      return reqs[#reqs].params.position.character == 4
    end)
    feed('!')
    shown(ITEMS[1], 1) -- the answer for "deaf!" (immediate)
    H.sleep(1500) -- the stub answers "deaf" after 1 s, cancelled or not
    check(ghost.text(buf) == ITEMS[1], 'the current suggestion stays: ' .. tostring(ghost.text(buf)))
  end)

  step(':BielikToggle turns ghost text off and on', function()
    vim.cmd('BielikToggle')
    check(not bielik.ghost_enabled(buf) and not ghost.visible(buf), 'off')
    vim.cmd('BielikToggle')
    check(bielik.ghost_enabled(buf), 'on')
  end)
end

H.run(main, 60000)
