// A model API stand-in on 127.0.0.1: records each request body and answers with the next
// queued response (or what a function of the request returns).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeApi {
  baseURL: string;
  requests: { method: string; url: string; body: any }[];
  close(): Promise<void>;
}

type Answer = ((body: any) => unknown) | Record<string, unknown>;

export async function startFakeApi(answers: Answer[]): Promise<FakeApi> {
  const requests: FakeApi['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? JSON.parse(text) : undefined;
      requests.push({ method: req.method ?? '', url: req.url ?? '', body });
      const next = answers.shift();
      if (next === undefined) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'no answer queued' } }));
        return;
      }
      let payload: unknown;
      try {
        payload = typeof next === 'function' ? (next as (b: any) => unknown)(body) : next;
      } catch (e) {
        // A failed check in the server shows up as a 400 the client reports.
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: String(e) } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A Chat Completions response with one choice: the assistant's `message` and why it stopped. */
export const chatCompletion = (message: object, finish: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'test-model',
  choices: [
    { index: 0, finish_reason: finish, logprobs: null, message: { role: 'assistant', refusal: null, ...message } },
  ],
});
