-- The headless tests' harness: steps run in a coroutine that yields to the event loop between
-- checks, so typed keys (feedkeys) are processed by Neovim's main loop as a user's would be.
-- Each step prints "ok - ..." or "not ok - ..." on stderr; the run ends with
-- "BIELIK-NVIM: all passed" (exit 0) or "BIELIK-NVIM: N failed" (exit 1).

local H = { failures = 0, done = false }

function H.log(msg)
  io.stderr:write(msg .. '\n')
end

function H.finish()
  if H.done then
    return
  end
  H.done = true
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop(true)
  end
  H.log(H.failures == 0 and 'BIELIK-NVIM: all passed' or ('BIELIK-NVIM: %d failed'):format(H.failures))
  vim.defer_fn(function()
    os.exit(H.failures == 0 and 0 or 1)
  end, 200)
end

local co
local function resume()
  if co and coroutine.status(co) == 'suspended' then
    local ok, err = coroutine.resume(co)
    if not ok then
      H.failures = H.failures + 1
      H.log('not ok - crashed: ' .. tostring(err) .. '\n' .. debug.traceback(co))
      H.finish()
    end
  end
end

--- Yield to the event loop for about `ms`.
function H.sleep(ms)
  vim.defer_fn(resume, ms)
  coroutine.yield()
end

--- Yield to the event loop until cond() is true; error after ms.
function H.wait_for(what, ms, cond)
  local deadline = vim.uv.now() + ms
  while true do
    local ok, value = pcall(cond)
    if ok and value then
      return value
    end
    if vim.uv.now() > deadline then
      error(('timed out after %d ms waiting for %s'):format(ms, what), 2)
    end
    H.sleep(20)
  end
end

function H.step(name, fn)
  local t0 = vim.uv.now()
  local ok, err = pcall(fn)
  if ok then
    H.log(('ok - %s (%.1f s)'):format(name, (vim.uv.now() - t0) / 1000))
  else
    H.failures = H.failures + 1
    H.log('not ok - ' .. name .. ': ' .. tostring(err))
  end
  return ok
end

function H.check(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

--- Type keys as a user would (mappings apply).
function H.feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mt', false)
end

function H.buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

--- Link the plugin into a fresh packpath (pack/bielik/opt) and :packadd it.
function H.packadd(root)
  local pack = vim.fn.tempname()
  vim.fn.mkdir(pack .. '/pack/bielik/opt', 'p')
  vim.uv.fs_symlink(root .. '/editors/nvim', pack .. '/pack/bielik/opt/bielik.nvim')
  vim.opt.packpath:prepend(pack)
  vim.cmd('filetype on')
  vim.cmd('packadd bielik.nvim')
end

--- Catch every message from now on (vim.notify; window/showMessage arrives there too): returns
--- the list they go to.
function H.catch_messages()
  local caught = {}
  local notify = vim.notify
  vim.notify = function(msg, level, opts)
    table.insert(caught, msg)
    return notify(msg, level, opts)
  end
  return caught
end

--- Type words after the cursor (insert mode) until ghost text shows: a document's first request
--- may run out of time on its cold prompt, and, as a user would, one types on. Returns the text.
function H.ghost_after_words(buf, words)
  for _, word in ipairs(words) do
    H.feed(word .. ' ')
    local ok = pcall(H.wait_for, 'ghost text', 20000, function()
      return require('bielik.ghost').text(buf)
    end)
    if ok then
      return require('bielik.ghost').text(buf)
    end
  end
  return nil
end

--- Run `main` in the coroutine; the whole run fails after `timeout_ms`.
function H.run(main, timeout_ms)
  vim.defer_fn(function()
    if not H.done then
      H.failures = H.failures + 1
      H.log('not ok - the whole test timed out')
      H.finish()
    end
  end, timeout_ms)
  co = coroutine.create(function()
    main()
    H.finish()
  end)
  vim.schedule(resume)
end

return H
