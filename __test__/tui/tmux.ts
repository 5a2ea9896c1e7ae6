// The chat screen driven as a person would: started in a detached tmux session on a private
// tmux server, typed into with send-keys, read with capture-pane.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'quickrealm.js');

/** One tmux server per test file, so sessions never meet a user's tmux or its environment. */
const SOCKET = `quickrealm-tui-${process.pid}`;
let counter = 0;

function tmux(...args: string[]) {
  try {
    return execFileSync('tmux', ['-L', SOCKET, '-f', '/dev/null', ...args], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('the chat screen tests drive it in tmux, which is not on the PATH (apt-get install tmux)');
    }
    throw e;
  }
}

let serverStarted = false;

/**
 * Starts this file's tmux server (no user configuration) and keeps it up while no session
 * runs, so that a session started right after the last one ended never meets a server on its
 * way out.
 */
function startServer() {
  if (serverStarted) return;
  tmux('start-server', ';', 'set-option', '-s', 'exit-empty', 'off');
  serverStarted = true;
}

/** Single-quoted for sh. */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export const EXIT_MARK = '[chat exited with';

export interface Screen {
  name: string;
  /** What the pane shows, scrollback included; with escapes, colours and attributes too. */
  text(options?: { escapes?: boolean }): string;
  /** Types `text` and presses Enter. */
  type(text: string): void;
  keys(...keys: string[]): void;
  /** The pane's title, which escape sequences could set. */
  title(): string;
  /** Polls the screen until `test` passes (a regex or a predicate); fails with the screen after `timeoutMs`. */
  waitFor(test: RegExp | ((screen: string) => boolean), timeoutMs?: number): Promise<string>;
  kill(): void;
}

/**
 * Starts `quickrealm chat args` in a 120x40 pane, in `cwd`, with only `env` (plus PATH, HOME,
 * TERM and a UTF-8 locale) in its environment. When the chat exits the pane stays and shows
 * `[chat exited with N]`.
 */
export function startChat(args: string[], options: { cwd: string; env: Record<string, string> }): Screen {
  startServer();
  const name = `chat-${process.pid}-${++counter}`;
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    ...options.env,
  };
  const command = [
    'env -i',
    ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
    quote(process.execPath),
    quote(BIN),
    'chat',
    ...args.map(quote),
  ].join(' ');
  tmux(
    'new-session',
    '-d',
    '-x',
    '120',
    '-y',
    '40',
    '-s',
    name,
    '-c',
    options.cwd,
    `${command}; echo "${EXIT_MARK} $?]"; sleep 600`,
  );
  const screen: Screen = {
    name,
    text({ escapes = false } = {}) {
      const args = ['capture-pane', '-p', '-J', '-S', '-5000', '-t', name];
      if (escapes) args.push('-e');
      return tmux(...args);
    },
    type(text) {
      tmux('send-keys', '-t', name, '-l', text);
      tmux('send-keys', '-t', name, 'Enter');
    },
    keys(...keys) {
      tmux('send-keys', '-t', name, ...keys);
    },
    async waitFor(test, timeoutMs = 20_000) {
      const pass = typeof test === 'function' ? test : (s: string) => test.test(s);
      const deadline = Date.now() + timeoutMs;
      let last = '';
      for (;;) {
        last = screen.text();
        if (pass(last)) return last;
        if (Date.now() > deadline) {
          throw new Error(`the screen never matched ${String(test)} within ${timeoutMs} ms; it shows:\n${last}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    title() {
      return tmux('display-message', '-p', '-t', name, '#{pane_title}').trim();
    },
    kill() {
      spawnSync('tmux', ['-L', SOCKET, 'kill-session', '-t', name]);
    },
  };
  return screen;
}

/** Stops this file's tmux server (after its last session). */
export function stopTmuxServer() {
  spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
  serverStarted = false;
}

/** How many times `pattern` occurs in `text`. */
export const occurrences = (text: string, pattern: RegExp) =>
  (text.match(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`)) ?? [])
    .length;
