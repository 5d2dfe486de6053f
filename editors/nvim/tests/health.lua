-- :checkhealth bielik's verdicts, each against a real program in its place (a throwaway
-- `bielik-lsp` script answering `doctor --json` as a server of each kind would), fast:
--   no server on PATH: ERROR with how to install it;
--   a server whose doctor fails (an old one without --json): ERROR naming the command;
--   a doctor that never answers: ERROR after the time limit, not a hung editor;
--   speculation not exact, with warnings (doctor exits 1): WARN with the fixing command, no ERROR;
-- and the doctor command built from the client's cmd and model settings.
--
--   nvim --headless -u NONE -i NONE -n -c 'luafile editors/nvim/tests/health.lua'

local root = vim.fn.getcwd()
package.path = root .. '/editors/nvim/tests/?.lua;' .. package.path
local H = require('harness')
local check, step = H.check, H.step

vim.opt.rtp:prepend(root .. '/editors/nvim')
vim.cmd('runtime plugin/bielik.lua')
local health = require('bielik.health')
local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
local PATH = vim.env.PATH

--- A `bielik-lsp` in a folder of its own, first on PATH, running `body` (sh).
local function server(body)
  local bin = dir .. '/' .. vim.fn.rand()
  vim.fn.mkdir(bin, 'p')
  vim.fn.writefile({ '#!/bin/sh', unpack(vim.split(body, '\n')) }, bin .. '/bielik-lsp')
  vim.fn.setfperm(bin .. '/bielik-lsp', 'rwxr-xr-x')
  vim.env.PATH = bin .. ':' .. PATH
end

--- :checkhealth bielik's report, as text.
local function report()
  vim.cmd('checkhealth bielik')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  return text
end

local REPORT = vim.json.encode({
  version = '0.1.0', executable = '/home/o/.local/share/uv/tools/bielik-lsp/bin/python', install = 'uv tool',
  platform = 'Linux', python = '3.12.3', backend = 'llamacpp', target = 'embedded:gemma-3-270m',
  drafter = 'auto', drafter_model = 'embedded:smollm2-135m',
  exact = { status = 'no', detail = 'llama.cpp built with tinyBLAS: batched passes differ', fix = 'bielik-lsp setup' },
  warnings = { 'WARNING: OpenBLAS not found; prefill is slower' }, lines = {},
})

local function main()
  step('no server on PATH: an ERROR that says how to install it', function()
    vim.env.PATH = dir .. '/empty'
    local text = report()
    check(text:find('ERROR bielik%-lsp not found'), text)
    check(text:find('uv tool install bielik-lsp', 1, true), text)
  end)

  step('a doctor that fails: an ERROR naming the command', function()
    server('echo "bielik-lsp: error: unrecognized arguments: --json" >&2; exit 2')
    local text = report()
    check(text:find('ERROR `bielik-lsp doctor --json` failed: exit code 2: bielik-lsp: error: unrecognized arguments: --json', 1, true), text)
  end)

  step('a doctor that never answers: an ERROR after the time limit', function()
    server('exec sleep 30')
    health.timeout_ms = 500
    local t0 = vim.uv.now()
    local text = report()
    health.timeout_ms = 60000
    check(vim.uv.now() - t0 < 10000, 'took ' .. (vim.uv.now() - t0) .. ' ms')
    check(text:find('no answer within 0.5 s', 1, true), text)
  end)

  step('speculation not exact and a warning: WARN with the fix, no ERROR', function()
    server(("[ \"$1 $2\" = 'doctor --json' ] || exit 9\ncat <<'JSON'\n%s\nJSON\nexit 1"):format(REPORT))
    local text = report()
    check(not text:find('ERROR'), text)
    check(text:find('OK bielik-lsp 0.1.0, installed by uv tool (Python 3.12.3, Linux)', 1, true), text)
    check(text:find('OK backend llamacpp; target embedded:gemma-3-270m; drafter auto (model embedded:smollm2-135m)', 1, true), text)
    check(text:find('WARNING speculation exact: no (llama.cpp built with tinyBLAS: batched passes differ)', 1, true), text)
    check(text:find('run: bielik-lsp setup', 1, true), text)
    check(text:find('WARNING OpenBLAS not found; prefill is slower', 1, true), text)
  end)

  step('the doctor command: the client cmd up to serve, then the model settings as flags', function()
    local argv = health.doctor_command({ '/venv/bin/python', '-m', 'app.cli', 'serve', '--stdio' },
      { preset = 'bielik', drafterModel = 'embedded:smollm2-135m', exact = false, k = 4, backend = vim.NIL })
    check(vim.deep_equal(argv, { '/venv/bin/python', '-m', 'app.cli', 'doctor', '--json', '--preset', 'bielik',
      '--drafter-model', 'embedded:smollm2-135m', '--no-exact' }), vim.inspect(argv))
  end)
  vim.env.PATH = PATH
end

H.run(main, 60000)
