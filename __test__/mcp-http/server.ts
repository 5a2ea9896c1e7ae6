// Starts `quickrealm mcp --http 0 ...` as a child process and reads the address it listens on
// from the line it writes to stderr.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'quickrealm.js');

export interface Served {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** The exit code, once it exits. */
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop: () => Promise<number | null>;
}

export function serve(args: string[], options: { env?: NodeJS.ProcessEnv; node?: string } = {}): Promise<Served> {
  const child = spawn(options.node ?? process.execPath, [BIN, 'mcp', '--http', '0', ...args], {
    cwd: ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line in 20 s: ${err}`)), 20_000);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      err += chunk;
      const line = err.split('\n').find((l) => l.startsWith('{"mcp":"listening"'));
      if (line) {
        clearTimeout(timer);
        resolve({
          url: JSON.parse(line).url,
          child,
          exited,
          stderr: () => err,
          stop: async () => {
            if (child.exitCode === null) child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`quickrealm mcp exited with ${code}: ${err}`));
    });
  });
}
