// Where the server is looked for (in order, on every OS) and the one table of install commands,
// with the terminal's script run for real.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const launch = require('../../out/launch');
const install = require('../../out/install');

/** A program `bielik-lsp` (or `name`) at `file`, executable. */
function put(file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return file;
}

/** Homes made by tmpHome(), removed once every test has run. */
const homes = [];
test.after(() => {
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});

function tmpHome() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bielik-locate-'));
  homes.push(home);
  return home;
}

const where = (home, env = {}, extra = {}) => ({ env: { PATH: path.join(home, 'path'), ...env }, home, platform: 'linux', trustedFolders: [], ...extra });

test('locate order: setting, PATH, usual places, the folders uv and pipx reported, their defaults, their environments', () => {
  const home = tmpHome();
  const envs = path.join(home, '.local', 'share', 'uv', 'tools', 'bielik-lsp', 'bin', 'bielik-lsp');
  const pipxVenv = path.join(home, '.local', 'share', 'pipx', 'venvs', 'bielik-lsp-remote', 'bin', 'bielik-lsp');
  const xdg = path.join(home, 'xdg-bin', 'bielik-lsp');
  const reported = path.join(home, 'reported-bin', 'bielik-lsp');
  const local = path.join(home, '.local', 'bin', 'bielik-lsp');
  const onPath = path.join(home, 'path', 'bielik-lsp');
  const w = () => where(home, { XDG_BIN_HOME: path.join(home, 'xdg-bin') }, { reported: { bins: [path.join(home, 'reported-bin')], envs: [] } });
  const found = () => launch.locateServer(undefined, w());
  assert.deepEqual(found(), { found: false, problem: found().problem });
  assert.match(found().problem, /^cannot find bielik-lsp \(looked on PATH, in ~\/\.local\/bin\/bielik-lsp, \/usr\/local\/bin\/bielik-lsp, .*~\/reported-bin\/bielik-lsp, ~\/xdg-bin\/bielik-lsp, .*~\/\.local\/share\/uv\/tools\/bielik-lsp\/bin\/bielik-lsp/);
  put(pipxVenv);
  assert.equal(found().command, pipxVenv, 'a pipx venv of the remote-only package, unlinked');
  put(envs);
  assert.equal(found().command, envs, "uv's tool environment before pipx's");
  put(xdg);
  assert.equal(found().command, xdg, "uv's bin folder ($XDG_BIN_HOME) before the environments");
  put(reported);
  assert.equal(found().command, reported, 'what `uv tool dir --bin` said before the defaults');
  put(local);
  assert.equal(found().command, local, '~/.local/bin, searched before the tool folders as it always was');
  put(onPath);
  assert.deepEqual(found(), { found: true, command: onPath, how: 'PATH' });
  assert.deepEqual(launch.locateServer(local, w()), { found: true, command: local, how: 'bielik.server.command' });
});

test("Windows: .exe in uv's and pipx's bin folders, Scripts\\ in their environments and a clone's .venv", () => {
  const w = {
    env: { APPDATA: 'C:\\Users\\ola\\AppData\\Roaming', LOCALAPPDATA: 'C:\\Users\\ola\\AppData\\Local', PATH: '' },
    home: 'C:\\Users\\ola', platform: 'win32', trustedFolders: ['D:\\src\\bielik-lsp'],
  };
  const places = launch.toolPlaces(w);
  for (const expected of [
    'D:\\src\\bielik-lsp\\.venv\\Scripts\\bielik-lsp.exe',
    'C:\\Users\\ola\\.local\\bin\\bielik-lsp.exe',
    'C:\\Users\\ola\\AppData\\Roaming\\uv\\data\\tools\\bielik-lsp\\Scripts\\bielik-lsp.exe',
    'C:\\Users\\ola\\AppData\\Roaming\\uv\\tools\\bielik-lsp-remote\\Scripts\\bielik-lsp.exe',
    'C:\\Users\\ola\\pipx\\venvs\\bielik-lsp\\Scripts\\bielik-lsp.exe',
    'C:\\Users\\ola\\AppData\\Local\\pipx\\venvs\\bielik-lsp\\Scripts\\bielik-lsp.exe',
  ]) assert.ok(places.includes(expected), `${expected} in ${places.join('\n')}`);
  assert.ok(!places.some((p) => p.includes('/')), 'Windows paths throughout');
  assert.ok(places.indexOf('C:\\Users\\ola\\.local\\bin\\bielik-lsp.exe') < places.indexOf('C:\\Users\\ola\\pipx\\venvs\\bielik-lsp\\Scripts\\bielik-lsp.exe'));
  const mac = launch.toolEnvDirs({ env: {}, home: '/Users/ola', platform: 'darwin', trustedFolders: [] });
  assert.deepEqual(mac, ['/Users/ola/.local/share/uv/tools', '/Users/ola/.local/pipx/venvs', '/Users/ola/Library/Application Support/pipx/venvs']);
  assert.deepEqual(launch.toolBinDirs({ env: { UV_TOOL_BIN_DIR: '/opt/uvbin', PIPX_BIN_DIR: '/opt/pipxbin', XDG_DATA_HOME: '/d/share' }, home: '/h', platform: 'linux', trustedFolders: [] }),
    ['/opt/uvbin', '/d/bin', '/opt/pipxbin', '/h/.local/bin']);
});

test('uv and pipx are found where their installers put them, and asked where they put tools', async () => {
  const home = tmpHome();
  const uv = put(path.join(home, '.local', 'bin', 'uv'));
  fs.writeFileSync(uv, `#!/bin/sh\ncase "$*" in "tool dir --bin") echo /opt/tools-bin ;; "tool dir") echo /opt/tools ;; esac\n`);
  const w = where(home);
  assert.deepEqual(launch.findInstallers(w), { uv, pipx: undefined }, 'not on PATH, in ~/.local/bin');
  assert.deepEqual(await launch.askInstallers(launch.findInstallers(w), process.env), { bins: ['/opt/tools-bin'], envs: ['/opt/tools'] });
  const hang = put(path.join(home, 'slow', 'pipx'));
  fs.writeFileSync(hang, '#!/bin/sh\nexec sleep 30\n');
  const t0 = Date.now();
  assert.deepEqual(await launch.askInstallers({ pipx: hang }, process.env, 300), { bins: [], envs: [] }, 'a hung installer adds nothing');
  assert.ok(Date.now() - t0 < 5000);
});

test('the install table: one command per build and installer, GPU builds with their CMake flags', () => {
  const sources = { source: 'git+https://github.com/bielik-lsp/bielik-lsp', remote: 'bielik-lsp-remote' };
  const uv = (b, platform = 'linux') => install.installStep(b, 'uv', '/home/ola/.local/bin/uv', sources, platform);
  assert.deepEqual(uv('cpu'), { program: '/home/ola/.local/bin/uv', args: ['tool', 'install', sources.source], env: {}, display: 'uv tool install git+https://github.com/bielik-lsp/bielik-lsp' });
  const rebuild = ['--no-binary-package', 'bielik-llama-cpp', '--reinstall-package', 'bielik-llama-cpp'];
  const oneLevel = '-DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_NATIVE=ON';
  assert.deepEqual(uv('cuda').args, ['tool', 'install', ...rebuild, sources.source]);
  assert.deepEqual(uv('cuda').env, { CMAKE_ARGS: `-DGGML_CUDA=on ${oneLevel}` });
  assert.deepEqual(uv('vulkan').env, { CMAKE_ARGS: `-DGGML_VULKAN=on ${oneLevel}` });
  assert.deepEqual(uv('metal', 'darwin'), uv('cpu', 'darwin'), 'the macOS wheel has Metal: nothing to build');
  assert.deepEqual(uv('remote').args, ['tool', 'install', 'bielik-lsp-remote']);
  const pipx = install.installStep('cuda', 'pipx', 'pipx', { source: '/tmp/dist/bielik_lsp-0.1.0-py3-none-any.whl', remote: 'x' }, 'linux');
  assert.deepEqual(pipx.args, ['install', '--pip-args=--no-binary=bielik-llama-cpp --no-cache-dir', '/tmp/dist/bielik_lsp-0.1.0-py3-none-any.whl']);
  assert.equal(pipx.display, `CMAKE_ARGS='-DGGML_CUDA=on ${oneLevel}' pipx install '--pip-args=--no-binary=bielik-llama-cpp --no-cache-dir' /tmp/dist/bielik_lsp-0.1.0-py3-none-any.whl`);
  const win = install.installStep('cuda', 'uv', 'C:\\Users\\ola\\.local\\bin\\uv.exe', { source: "C:\\O'Neil\\w.whl", remote: 'r' }, 'win32');
  assert.equal(win.display, `$env:CMAKE_ARGS='-DGGML_CUDA=on ${oneLevel}'; uv tool install ${rebuild.join(' ')} 'C:\\O''Neil\\w.whl'`);
  assert.deepEqual(install.buildsFor('linux'), ['cpu', 'cuda', 'vulkan', 'remote']);
  assert.deepEqual(install.buildsFor('darwin'), ['cpu', 'metal', 'remote']);
  assert.deepEqual(install.buildsFor('win32'), ['cpu', 'cuda', 'vulkan', 'remote']);
  assert.deepEqual(install.upgradeStep('pipx', 'pipx', 'bielik-lsp-remote', 'linux').args, ['upgrade', 'bielik-lsp-remote']);
  assert.deepEqual(install.upgradeStep('uv', 'uv', 'bielik-lsp', 'linux').args, ['tool', 'upgrade', 'bielik-lsp']);
  assert.equal(install.uvInstallerStep('linux').display, 'curl -LsSf https://astral.sh/uv/install.sh | sh');
  assert.deepEqual(install.uvInstallerStep('win32').args.slice(-2), ['-Command', 'irm https://astral.sh/uv/install.ps1 | iex']);
});

test('installedBy: uv tools and pipx venvs (links resolved), nothing else; isOlder by PEP 440 releases', () => {
  assert.deepEqual(install.installedBy('/home/o/.local/share/uv/tools/bielik-lsp/bin/bielik-lsp'), { installer: 'uv', pkg: 'bielik-lsp' });
  assert.deepEqual(install.installedBy('C:\\Users\\o\\AppData\\Roaming\\uv\\data\\tools\\bielik-lsp-remote\\Scripts\\bielik-lsp.exe'), { installer: 'uv', pkg: 'bielik-lsp-remote' });
  assert.deepEqual(install.installedBy('/home/o/.local/share/pipx/venvs/bielik-lsp/bin/bielik-lsp'), { installer: 'pipx', pkg: 'bielik-lsp' });
  assert.deepEqual(install.installedBy('C:\\Users\\o\\pipx\\venvs\\bielik-lsp\\Scripts\\bielik-lsp.exe'), { installer: 'pipx', pkg: 'bielik-lsp' });
  assert.equal(install.installedBy('/home/o/src/bielik-lsp/.venv/bin/bielik-lsp'), undefined);
  assert.equal(install.installedBy('/usr/local/bin/bielik-lsp'), undefined);
  const older = [['0.0.9', '0.1.0'], ['0.1.0.dev3', '0.1.0'], ['0.1.0rc1', '0.1.0'], ['0.1', '0.1.1'], ['0.9.12', '0.10.0']];
  for (const [s, e] of older) assert.equal(install.isOlder(s, e), true, `${s} < ${e}`);
  const notOlder = [['0.1.0', '0.1.0'], ['0.1.0.post1', '0.1.0'], ['0.1.0+local', '0.1.0'], ['0.2.0', '0.1.0'], ['0.1.0.dev1', '0.1.0-beta'], ['unknown', '0.1.0']];
  for (const [s, e] of notOlder) assert.equal(install.isOlder(s, e), false, `${s} vs ${e}`);
});

test("the terminal's script: the installer's own output, its exit code to the status file, the window kept until Enter", () => {
  const dir = tmpHome();
  const program = put(path.join(dir, 'fake uv'));
  fs.writeFileSync(program, '#!/bin/sh\nprintf "args:"; for a in "$@"; do printf " [%s]" "$a"; done; echo " CMAKE_ARGS=$CMAKE_ARGS"; exit 3\n');
  const step = { program, args: ['tool', 'install', "it's $HOME; rm -rf ~"], env: { CMAKE_ARGS: '-DGGML_CUDA=on' }, display: 'x' };
  const l = install.terminalLaunch(step, 'linux', dir);
  assert.equal(l.shellPath, '/bin/sh');
  const r = cp.spawnSync(l.shellPath, l.shellArgs, { env: { ...process.env, ...l.env }, input: '\n', encoding: 'utf8' });
  assert.equal(r.status, 3);
  assert.match(r.stdout, /^args: \[tool\] \[install\] \[it's \$HOME; rm -rf ~\] CMAKE_ARGS=-DGGML_CUDA=on\n\nexit code 3\. It failed.*Press Enter to close this terminal\.\n$/);
  assert.equal(fs.readFileSync(l.statusFile, 'utf8'), '3\n');
  const w = install.terminalLaunch({ ...step, program: 'C:\\Program Files\\uv\\uv.exe' }, 'win32', 'C:\\Temp');
  assert.equal(w.shellPath, 'powershell.exe');
  assert.deepEqual(w.shellArgs.slice(0, 4), ['-NoProfile', '-ExecutionPolicy', 'ByPass', '-EncodedCommand']);
  const script = Buffer.from(w.shellArgs[4], 'base64').toString('utf16le');
  assert.match(script, /^& 'C:\\Program Files\\uv\\uv\.exe' 'tool' 'install' 'it''s \$HOME; rm -rf ~'$/m, 'literal single-quoted arguments: nothing expands');
  assert.match(script, /Set-Content -Path \$env:BIELIK_STATUS_FILE -Value \$s/);
  assert.match(w.statusFile, /^C:\\Temp\\bielik-install-[0-9a-f]+\.status$/);
  assert.equal(w.env.CMAKE_ARGS, '-DGGML_CUDA=on');
});
