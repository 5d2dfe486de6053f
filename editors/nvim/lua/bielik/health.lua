-- :checkhealth bielik: the server program, its version and install, the backend and models it
-- will load, and whether speculation is exact, as `bielik-lsp doctor --json` reports them (one
-- JSON object on stdout; exit 1 when it has warnings). Non-exact speculation is a warning with
-- the command that fixes it, never an error; errors are a missing server or a doctor that fails.

local M = {}

M.timeout_ms = 60000 -- doctor imports every backend's library: seconds, not minutes
local INSTALL = {
  'uv tool install bielik-lsp   (https://docs.astral.sh/uv/ for uv itself)',
  'pipx install bielik-lsp',
  'or name the program: vim.lsp.config("bielik", { cmd = { "/path/to/bielik-lsp", "serve" } })',
}
-- The settings that choose what the server loads, passed to doctor as its flags.
local FLAGS = { 'preset', 'target', 'drafter_model', 'backend', 'drafter_backend', 'device', 'exact' }

--- The client configuration that would start: vim.lsp.config's (lsp/bielik.lua plus the user's
--- overrides) on 0.11+, else setup{}'s.
local function client_config()
  local bielik = require('bielik')
  if vim.lsp.config ~= nil then
    local ok, config = pcall(function()
      return vim.lsp.config.bielik
    end)
    if ok and config then
      return config
    end
  end
  return bielik.lsp_config()
end

--- `cmd` with `serve` (and what follows it) replaced by `doctor --json`, plus the model flags.
function M.doctor_command(cmd, settings)
  local argv = {}
  for _, arg in ipairs(cmd) do
    if arg == 'serve' or arg == '--stdio' then
      break
    end
    table.insert(argv, arg)
  end
  vim.list_extend(argv, { 'doctor', '--json' })
  for _, key in ipairs(FLAGS) do
    local camel = key:gsub('_(%l)', string.upper)
    local value = settings[key]
    if value == nil then
      value = settings[camel]
    end
    local flag = '--' .. key:gsub('_', '-')
    if type(value) == 'boolean' then
      table.insert(argv, value and flag or ('--no-' .. flag:sub(3)))
    elseif value ~= nil and value ~= vim.NIL then
      vim.list_extend(argv, { flag, tostring(value) })
    end
  end
  return argv
end

--- Run doctor; returns the report, or nil and why not.
function M.doctor(argv)
  local ok, result = pcall(function()
    return vim.system(argv, { text = true, timeout = M.timeout_ms }):wait()
  end)
  if not ok then
    return nil, tostring(result)
  end
  if result.code == 124 then
    return nil, ('no answer within %g s'):format(M.timeout_ms / 1000)
  end
  local decoded, report = pcall(vim.json.decode, vim.trim(result.stdout or ''), { luanil = { object = true } })
  if decoded and type(report) == 'table' and report.version then
    return report
  end
  local err = vim.split(vim.trim(result.stderr or ''), '\n')
  return nil, ('exit code %d: %s'):format(result.code, err[#err] ~= '' and err[#err] or '(no output)')
end

local function check_neovim()
  local v = vim.version()
  local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.12') == 1 then
    vim.health.ok('Neovim ' .. version .. ': ghost text, vim.lsp.enable')
  elseif vim.fn.has('nvim-0.11') == 1 then
    vim.health.warn('Neovim ' .. version .. ': no ghost text before 0.12 (:BielikContinue and the rest work)')
  else
    vim.health.error('Neovim ' .. version .. ': bielik.nvim needs 0.11+')
  end
  local how = vim.lsp.is_enabled and vim.lsp.is_enabled('bielik') and "vim.lsp.enable('bielik')"
    or (require('bielik')._setup_done and 'require("bielik").setup{}')
  if how then
    vim.health.ok('started by ' .. how)
  else
    vim.health.info("not started yet: vim.lsp.enable('bielik') or require('bielik').setup{} in your config")
  end
end

local function check_exact(exact)
  local line = ('speculation exact: %s (%s)'):format(exact.status, exact.detail or '')
  if exact.status == 'yes' then
    vim.health.ok(line)
  elseif exact.status == 'no' then
    vim.health.warn(line .. '; suggestions are still right, only not bit for bit plain decoding',
      exact.fix and { 'run: ' .. exact.fix } or nil)
  else
    vim.health.info(line)
  end
end

local function check_report(report)
  vim.health.ok(('bielik-lsp %s, installed by %s (Python %s, %s)'):format(report.version, report.install,
    report.python, report.platform))
  local drafter = report.drafter_model and ('%s (model %s)'):format(report.drafter, report.drafter_model)
    or report.drafter
  vim.health.ok(('backend %s; target %s; drafter %s'):format(report.backend, report.target, drafter))
  if type(report.exact) == 'table' then
    check_exact(report.exact)
  end
  for _, warning in ipairs(report.warnings or {}) do
    vim.health.warn(vim.trim(warning:gsub('^%s*WARNING:?%s*', '')))
  end
end

local function check_clients()
  local bielik = require('bielik')
  for _, client in ipairs(bielik.clients()) do
    local info = client.server_info or {}
    local state, message = bielik.state.model or 'starting', bielik.state.message
    local detail = message and message ~= ('model ' .. state) and (': ' .. message) or ''
    vim.health.info(('running: client %d (%s %s), model %s%s'):format(client.id, info.name or 'bielik-lsp',
      info.version or '', state, detail))
  end
end

function M.check()
  vim.health.start('bielik.nvim')
  check_neovim()
  vim.health.start('bielik-lsp server')
  local config = client_config()
  local cmd = config.cmd
  if type(cmd) ~= 'table' then
    vim.health.info('cmd is a function: not checked')
    return
  end
  local program = vim.fn.exepath(cmd[1])
  if program == '' then
    vim.health.error(('%s not found (not executable, not on PATH). Install it:'):format(cmd[1]), INSTALL)
    return
  end
  vim.health.ok('found: ' .. program)
  local argv = M.doctor_command(cmd, (config.settings or {}).bielik or {})
  local report, err = M.doctor(argv)
  if not report then
    vim.health.error(('`%s` failed: %s'):format(table.concat(argv, ' '), err),
      { 'an older bielik-lsp has no `doctor --json`: uv tool upgrade bielik-lsp (or pipx upgrade bielik-lsp)' })
    return
  end
  check_report(report)
  check_clients()
end

return M
