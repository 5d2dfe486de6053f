// Pure logic: settings, protocol arguments, the status bar model, package.json consistency.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const config = require('../../out/config');
const proto = require('../../out/protocol');
const { StatusModel } = require('../../out/status');
const { statsBody, statsPage } = require('../../out/statsPage');
const inline = require('../../out/inline');
const pkg = require('../../package.json');

const inspectOf = (values) => (key) => (key in values ? { globalValue: values[key], defaultValue: 'd' } : { defaultValue: 'd' });

test('serverSettings sends only what the user set, never null, always the languages', () => {
  assert.deepEqual(config.serverSettings(inspectOf({})), { languages: ['markdown', 'plaintext', 'latex'] });
  const s = config.serverSettings(inspectOf({ k: 6, target: 'embedded:gemma-3-270m', seed: null, 'server.command': 'x', languages: ['markdown'] }));
  assert.deepEqual(s, { k: 6, target: 'embedded:gemma-3-270m', languages: ['markdown'] });
});

test('workspace and folder values win over user values', () => {
  const s = config.serverSettings((key) => (key === 'k' ? { globalValue: 1, workspaceValue: 2, workspaceFolderValue: 3 } : undefined));
  assert.equal(s.k, 3);
});

test('changedSettings resets unset keys to the server default, restarts for null defaults', () => {
  const prev = { k: 6, debounceMs: 5, languages: ['markdown'] };
  const a = config.changedSettings(prev, inspectOf({ k: 6 }));
  assert.deepEqual(a, { settings: { k: 6, debounceMs: 0, languages: ['markdown', 'plaintext', 'latex'] }, restart: false });
  const b = config.changedSettings({ target: '/models/x.gguf' }, inspectOf({}));
  assert.equal(b.restart, true);
});

test('serverCommand: what is set (or nothing), custom args, bad values ignored', () => {
  assert.deepEqual(config.serverCommand(inspectOf({})), { command: undefined, args: ['serve'] });
  assert.deepEqual(config.serverCommand(inspectOf({ 'server.command': '~/bl/.venv/bin/bielik-lsp', 'server.args': ['--preset', 'bielik', 'serve'] })),
    { command: '~/bl/.venv/bin/bielik-lsp', args: ['--preset', 'bielik', 'serve'] });
  assert.deepEqual(config.serverCommand(inspectOf({ 'server.command': '  ', 'server.args': 'serve' })), { command: undefined, args: ['serve'] });
});

test('documentSelector covers files and untitled buffers of each language', () => {
  assert.deepEqual(config.documentSelector(['latex']), [{ language: 'latex', scheme: 'file' }, { language: 'latex', scheme: 'untitled' }]);
  assert.equal(config.needsRestart((s) => s === 'bielik.server.args'), true);
  assert.equal(config.needsRestart((s) => s === 'bielik.k'), false);
});

test('command arguments match the server (lsp_server/commands.py)', () => {
  assert.deepEqual(proto.continueParams('file:///a.md', { line: 2, character: 5 }, 16),
    { command: 'bielik.continueDocument', arguments: [{ uri: 'file:///a.md', position: { line: 2, character: 5 }, maxTokens: 16 }] });
  assert.deepEqual(proto.continueParams('file:///a.md'), { command: 'bielik.continueDocument', arguments: [{ uri: 'file:///a.md' }] });
  assert.deepEqual(proto.toggleParams('file:///a.md', 'off'), { command: 'bielik.toggleSpeculation', arguments: [{ uri: 'file:///a.md', mode: 'off' }] });
  assert.deepEqual(proto.toggleParams('file:///a.md'), { command: 'bielik.toggleSpeculation', arguments: [{ uri: 'file:///a.md' }] });
  assert.deepEqual(proto.statsParams(), { command: 'bielik.showStats', arguments: [] });
  assert.deepEqual(['auto', 'off', 'on'].map(proto.nextMode), ['off', 'on', 'auto']);
});

test('status model: loading, ready with per-file speculation and reason, error', () => {
  const m = new StatusModel();
  m.update({ state: 'loading', message: 'model loading' });
  assert.equal(m.render('file:///a.md').text, '$(sync~spin) Bielik loading');
  m.update({ state: 'loading', message: 'converting Bielik-11B to MLX once (about 4 min)\nthen the caches' });
  const first = m.render('file:///a.md');
  assert.equal(first.text, '$(sync~spin) Bielik loading (converting Bielik-11B to MLX once (about 4 min))', "a long first start says what it does, in the status bar");
  assert.equal(first.severity, 'normal', 'never as an error');
  m.setState('missing', 'bielik-lsp is not installed: click to install it');
  assert.deepEqual([m.render().text, m.render().tooltip.split('\n').at(-1)], ['$(cloud-download) Bielik not installed', 'Click to install the server.']);
  m.setState('installing', 'installing bielik-lsp in a terminal');
  assert.equal(m.render().text, '$(sync~spin) Bielik installing');
  m.update({ state: 'ready', message: 'model ready' });
  assert.equal(m.render('file:///a.md').text, '$(feather) Bielik spec:auto');
  m.update({ state: 'ready', message: 'model ready', uri: 'file:///a.md', speculation: 'off', speculationSource: 'magic comment', drafter: 'none', reason: 'speculation off for this file', policyReasons: ['short prompt'], acceptanceRate: 0.5, tokensPerSecond: 12.34, prefilledTokens: 7 });
  const r = m.render('file:///a.md');
  assert.equal(r.text, '$(feather) Bielik spec:off 50% 12.3 tok/s');
  m.update({ state: 'ready', message: 'model ready', uri: 'file:///a.md', tokensPerSecond: 12.34, charsPerSecond: 30.4 });
  assert.equal(m.render('file:///a.md').text, '$(feather) Bielik spec:off 50% 12.3 tok/s 30 chars/s');
  assert.match(m.render('file:///a.md').tooltip, /12\.3 tokens\/s, 30\.4 characters\/s/);
  assert.match(r.tooltip, /Speculation: off \(magic comment\)/);
  assert.match(r.tooltip, /Why: speculation off for this file/);
  assert.match(r.tooltip, /Policy: short prompt/);
  assert.match(r.tooltip, /Last speed: 12.3 tokens\/s/);
  assert.equal(m.render('file:///b.md').text, '$(feather) Bielik spec:auto', 'other files keep their own state');
  m.update({ state: 'ready', message: 'model ready' }); // a global status keeps per-file data
  assert.match(m.render('file:///a.md').text, /spec:off/);
  m.setSpeculation('file:///a.md', 'on', 'speculation on for this file: lookup drafter');
  assert.match(m.render('file:///a.md').tooltip, /Speculation: on \(toggle\)/);
  m.update({ state: 'error', message: 'no such model' });
  const e = m.render('file:///a.md');
  assert.equal(e.severity, 'error');
  assert.match(e.tooltip, /no such model/);
});

test('the stats page reads bielik.showStats into tables, escaped', () => {
  const report = {
    state: 'ready', error: null, memory_mb: 812.4, config: { target: 'embedded:gemma-3-270m', backend: 'llamacpp', drafter: 'auto', k: 16 },
    session: { requests: 3, suggestions: 2, drafted: 8, accepted: 2, acceptance_rate: 0.25, tokens_per_second: 10, kinds: { model: { delivered: 2, shown: 1, accepted: 1 } } },
    files: { 'file:///a.md': { requests: 3, speculation: 'auto', source: 'default', drafter: 'lookup', reason: 'auto <b>', policy_reasons: ['x'], last_stop: 'eos' } },
  };
  const body = statsBody(report, 'file:///a.md');
  assert.match(body, /<h2>This file <code>file:\/\/\/a.md<\/code><\/h2>/);
  assert.match(body, /2 of 8 drafted tokens accepted \(25%\)/);
  assert.match(body, /<li>x<\/li>/);
  assert.match(body, /lookup: auto &lt;b&gt;/, 'server text is escaped');
  assert.match(body, /embedded:gemma-3-270m/);
  assert.match(body, /<th>partially accepted<\/th>/);
  assert.doesNotMatch(body, /class="error"/, 'no error, no error row');
  assert.match(statsBody({ ...report, state: 'error', error: 'cannot load x' }), /<span class="error">cannot load x<\/span>/);
  const page = statsPage(report, undefined, 'N0NCE', 'vscode-resource:', new Date(0));
  assert.match(page, /script-src 'nonce-N0NCE'/);
  assert.match(page, /<h2>File <code>file:\/\/\/a.md<\/code>/, 'every file without an active one');
  assert.match(page, /id="refresh".*id="raw"/);
});

test('partialAccept finds the item the text continues and how much of it is in', () => {
  const items = [{ insertText: ' w domu', start: 4 }, { insertText: ' w pracy.', start: 4 }, { insertText: 'x', start: 9 }];
  assert.deepEqual(inline.partialAccept(items, 'Jest w pracy', 12), { item: items[1], acceptedLength: 8 });
  assert.deepEqual(inline.partialAccept(items, 'Jest w', 6), { item: items[0], acceptedLength: 2 }, 'alike: the first');
  assert.equal(inline.partialAccept(items, 'Jest w pracy.', 13), undefined, 'complete: a whole accept');
  assert.equal(inline.partialAccept(items, 'Jest', 4), undefined, 'before every item');
  const command = { title: 't', command: 'bielik.accepted', arguments: ['file:///a.md', '7'] };
  assert.deepEqual(inline.partialAcceptParams({ item: { insertText: ' w domu', start: 4, command }, acceptedLength: 2 }),
    { item: { insertText: ' w domu', command }, acceptedLength: 2 });
});

test('package.json contributes every server setting with the server default, and the commands', () => {
  const props = pkg.contributes.configuration.properties;
  for (const [key, def] of Object.entries(config.SERVER_SETTINGS)) {
    const p = props[`bielik.${key}`];
    assert.ok(p, `bielik.${key} is contributed`);
    assert.deepEqual(p.default, def, `bielik.${key} default`);
    assert.ok(p.markdownDescription || p.description, `bielik.${key} has a description`);
  }
  for (const key of config.RESTART_KEYS) assert.ok(props[`bielik.${key}`], `bielik.${key} is contributed`);
  const contributed = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(contributed, Object.values(proto.CLIENT_COMMANDS).sort());
  for (const c of contributed) assert.ok(!Object.values(proto.SERVER_COMMANDS).includes(c), 'client ids differ from server ids');
  for (const lang of config.DEFAULT_LANGUAGES) assert.ok(pkg.activationEvents.includes(`onLanguage:${lang}`));
  assert.match(pkg.devDependencies['vscode-languageclient'], /^[~^]?1\d\./, 'vscode-languageclient v10 or later (bundled)');
  assert.equal(pkg.dependencies, undefined, 'everything is bundled into dist/extension.js');
  assert.equal(pkg.main, './dist/extension.js');
});

test('server command and args are machine-scoped: a workspace value never chooses the program', () => {
  const inspect = (key) => ({
    'server.command': { globalValue: '/opt/bl/bielik-lsp', workspaceValue: './evil.sh', workspaceFolderValue: './evil.sh' },
    'server.args': { workspaceValue: ['-c', 'rm -rf ~'] },
  })[key];
  assert.deepEqual(config.serverCommand(inspect), { command: '/opt/bl/bielik-lsp', args: ['serve'] });
  for (const key of ['bielik.server.command', 'bielik.server.args', 'bielik.server.installSource', 'bielik.server.installSourceRemote']) {
    assert.equal(pkg.contributes.configuration.properties[key].scope, 'machine', key);
  }
  const sources = (key) => ({ 'server.installSource': { globalValue: ' /w/bielik_lsp-0.1.0-py3-none-any.whl ', workspaceValue: 'evil' } })[key];
  assert.deepEqual(config.installSources(sources), { source: '/w/bielik_lsp-0.1.0-py3-none-any.whl', remote: 'bielik-lsp-remote' });
  assert.deepEqual(config.installSources(() => undefined), { source: 'bielik-lsp', remote: 'bielik-lsp-remote' });
  assert.equal(pkg.contributes.configuration.properties['bielik.server.installSource'].default, 'bielik-lsp');
  assert.deepEqual(pkg.extensionKind, ['workspace'], 'Remote-SSH and dev containers run the server where the files are');
});

test('untrusted workspaces: the models come from the user settings only', () => {
  const untrusted = pkg.capabilities.untrustedWorkspaces;
  assert.equal(untrusted.supported, 'limited');
  assert.deepEqual(untrusted.restrictedConfigurations, config.RESTRICTED_KEYS.map((k) => `bielik.${k}`));
  const inspect = (key) => ({
    target: { globalValue: 'embedded:gemma-3-270m', workspaceValue: '/tmp/x.gguf' },
    drafterModel: { workspaceValue: 'someone/model' },
    k: { workspaceValue: 4 },
  })[key];
  assert.deepEqual(config.serverSettings(inspect, false),
    { target: 'embedded:gemma-3-270m', k: 4, languages: config.DEFAULT_LANGUAGES });
  assert.deepEqual(config.serverSettings(inspect, true),
    { target: '/tmp/x.gguf', drafterModel: 'someone/model', k: 4, languages: config.DEFAULT_LANGUAGES });
});

test('values of the wrong type are left out with a message; a string is never a list', () => {
  const r = config.readSettings(inspectOf({ globs: '*.md', languages: 'markdown', k: '4', seed: 3, enabled: 'yes', target: 7 }));
  assert.deepEqual(r.settings, { seed: 3, languages: config.DEFAULT_LANGUAGES });
  assert.deepEqual(r.problems, [
    'bielik.target must be a string, not 7; ignored',
    'bielik.k must be an integer, not "4"; ignored',
    'bielik.languages must be a list of strings, not "markdown"; ignored',
    'bielik.globs must be a list of strings, not "*.md"; ignored',
    'bielik.enabled must be a boolean, not "yes"; ignored',
  ]);
  assert.deepEqual(config.readSettings(inspectOf({ globs: ['*.md', 3] })).problems,
    ['bielik.globs must be a list of strings, not ["*.md",3]; ignored']);
});

test('the type each server setting must have agrees with package.json', () => {
  const props = pkg.contributes.configuration.properties;
  const json = { string: 'string', number: 'number', integer: 'integer', boolean: 'boolean' };
  for (const key of Object.keys(config.SERVER_SETTINGS)) {
    const p = props[`bielik.${key}`];
    const types = [p.type].flat().filter((t) => t !== 'null');
    const kind = config.kindOf(key);
    if (kind === 'strings') assert.deepEqual([types, p.items.type], [['array'], 'string'], key);
    else assert.ok(types.every((t) => [json[kind]].flat().includes(t)), `${key}: ${kind} vs ${types}`);
  }
});

test('describeExit: the last line naming an error, else the last lines; Restarts: 3 in 3 minutes', () => {
  const { Tail, Restarts, describeExit, launchArgs } = require('../../out/launch');
  const tail = new Tail();
  tail.push('Traceback (most recent call last):\n  File "x.py", line 1\nModuleNotFoundError: No module named ');
  tail.push("'pygls'\n\n");
  assert.equal(describeExit({ code: 1, signal: null }, tail), "exited with code 1: ModuleNotFoundError: No module named 'pygls'");
  const quiet = new Tail();
  quiet.push('loading\nstill loading\nbye\n');
  assert.equal(describeExit({ code: null, signal: 'SIGKILL' }, quiet), 'was killed (SIGKILL): loading | still loading | bye');
  assert.equal(describeExit({ code: 0, signal: null }, new Tail()), 'exited with code 0');
  const r = new Restarts();
  assert.deepEqual([0, 1000, 2000, 3000].map((t) => r.allow(t)), [true, true, true, false]);
  assert.equal(r.allow(3 * 60 * 1000 + 1), true, 'the oldest left the window');
  assert.deepEqual(launchArgs(['serve'], 42), ['serve', '--stdio', '--clientProcessId=42']);
});
