// `quickrealm console`: served over HTTP from a session folder, read-only without a token, and
// with --token-env behind the bearer token or the sign-in cookie.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeSessions } from './fixtures.js';

const BIN = join(__dirname, '..', '..', 'bin', 'quickrealm.js');
const TOKEN = 'a-reviewer-token-of-some-length';
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGTERM');
});

/** Starts the console and resolves to the address it prints. */
function start(args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'console', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (chunk) => {
      err += chunk;
      const url = /quickrealm console: (http:\/\/\S+?)\/? \(/.exec(err)?.[1];
      if (url) resolve(url);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

describe('quickrealm console', () => {
  it('serves a session folder read-only', async () => {
    const { dir } = await makeSessions();
    const url = await start(['--dir', dir, '--base-path', '/review']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/review$/);
    const list = await fetch(`${url}/`);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('href="/review/sessions/asks"');
    const page = await (await fetch(`${url}/sessions/asks`)).text();
    expect(page).not.toContain('method="post"');
    const post = await fetch(`${url}/sessions/asks/approve`, { method: 'POST', body: 'request=1.0' });
    expect(post.status).toBe(403);
  });

  it('with --token-env needs the token for pages and actions, as a bearer or the sign-in cookie', async () => {
    const { dir } = await makeSessions();
    const url = await start(['--dir', dir, '--token-env', 'REVIEW_TOKEN'], { REVIEW_TOKEN: TOKEN });
    expect((await fetch(`${url}/sessions/asks`)).status).toBe(401);
    expect((await fetch(`${url}/api/sessions`)).status).toBe(401);
    expect((await fetch(`${url}/api/sessions`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const api = await fetch(`${url}/api/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(api.status).toBe(200);
    expect((await fetch(`${url}/assets/console.css`)).status).toBe(200);

    const wrong = await fetch(`${url}/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'nope' }),
      redirect: 'manual',
    });
    expect(wrong.status).toBe(403);
    const login = await fetch(`${url}/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: TOKEN }),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    expect(login.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    expect(cookie).not.toContain(TOKEN);
    const page = await fetch(`${url}/sessions/asks`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('form method="post"');
    const csrfCookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const approve = await fetch(`${url}/sessions/asks/approve`, {
      method: 'POST',
      headers: { cookie: `${cookie}; ${csrfCookie}` },
      body: new URLSearchParams({ csrf, request: '1.0' }),
      redirect: 'manual',
    });
    expect(approve.status).toBe(303);
  });

  it('refuses a missing store, both stores, and a short token', () => {
    const run = (args: string[], env = {}) =>
      spawnSync(process.execPath, [BIN, 'console', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
    expect(run([]).status).toBe(2);
    expect(run(['--dir', '/tmp', '--db', 'postgres://x']).status).toBe(2);
    const short = run(['--dir', '/tmp', '--token-env', 'SHORT'], { SHORT: 'abc' });
    expect(short.status).toBe(2);
    expect(JSON.parse(short.stderr)).toMatchObject({ code: 'INVALID_INPUT' });
    expect(run(['--dir', '/tmp', '--zip', 'x.zip']).status).toBe(2);
  });
});
