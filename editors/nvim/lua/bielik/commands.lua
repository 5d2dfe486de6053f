-- bielik.nvim's user commands, created once (require('bielik').init loads this module).

local function bielik()
  return require('bielik')
end

vim.api.nvim_create_user_command('BielikContinue', function(cmd)
  bielik().continue({ max_tokens = tonumber(cmd.args) })
end, { nargs = '?', desc = 'Bielik: continue the document at the cursor [max tokens]' })

vim.api.nvim_create_user_command('BielikToggleSpeculation', function(cmd)
  bielik().toggle_speculation(cmd.args ~= '' and cmd.args or nil)
end, {
  nargs = '?',
  complete = function()
    return { 'on', 'off', 'auto' }
  end,
  desc = 'Bielik: speculation on/off/auto for this file (no argument: cycle)',
})

vim.api.nvim_create_user_command('BielikStats', function()
  bielik().stats()
end, { desc = 'Bielik: statistics for this file and the session' })

vim.api.nvim_create_user_command('BielikToggle', function()
  bielik().toggle_buffer(0)
end, { desc = 'Bielik: ghost text on/off for this buffer' })
