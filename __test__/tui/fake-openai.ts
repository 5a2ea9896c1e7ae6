// An OpenAI-compatible Chat Completions endpoint on 127.0.0.1 for the chat screen's tests. A
// script decides each answer from the request: streamed (SSE, in parts, optionally held at a
// gate until the test opens it), plain JSON, or an HTTP error. Every request body is recorded.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ToolCallSpec = { id: string; name: string; arguments: string };

export type Answer =
  | {
      kind: 'stream';
      /** Reasoning parts sent before the text, as Ollama sends them (`delta.reasoning`). */
      reasoning?: string[];
      /** Parts of the text, sent one chunk each. */
      parts?: string[];
      /** Reached after the parts at this index: the rest waits until the promise settles. */
      gate?: { after: number; open: Promise<void> };
      toolCalls?: ToolCallSpec[];
      usage?: { prompt_tokens: number; completion_tokens: number };
    }
  | {
      kind: 'json';
      text?: string;
      toolCalls?: ToolCallSpec[];
      usage?: { prompt_tokens: number; completion_tokens: number };
    }
  | { kind: 'error'; status: number; message: string };

export interface FakeOpenAI {
  baseURL: string;
  requests: any[];
  /** The Authorization header of each request. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** The text of the newest user message of a request. */
export function lastUserText(body: any): string {
  const users = (body.messages ?? []).filter((m: any) => m.role === 'user');
  const last = users[users.length - 1];
  return typeof last?.content === 'string' ? last.content : '';
}

/** Whether the request answers tool calls (its newest message is a tool result). */
export function answersTool(body: any): boolean {
  const messages = body.messages ?? [];
  return messages[messages.length - 1]?.role === 'tool';
}

const chunk = (delta: unknown, finish: string | null = null) => ({
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'test-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

async function sendStream(res: ServerResponse, body: any, a: Extract<Answer, { kind: 'stream' }>) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  send(chunk({ role: 'assistant', content: '' }));
  for (const r of a.reasoning ?? []) send(chunk({ reasoning: r }));
  const parts = a.parts ?? [];
  for (let i = 0; i < parts.length; i++) {
    send(chunk({ content: parts[i] }));
    if (a.gate && a.gate.after === i) await a.gate.open;
  }
  // Tool calls as OpenAI streams them: the id and name first, the arguments in two pieces.
  (a.toolCalls ?? []).forEach((c, index) => {
    const half = Math.floor(c.arguments.length / 2);
    send(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
    send(chunk({ tool_calls: [{ index, function: { arguments: c.arguments.slice(0, half) } }] }));
    send(chunk({ tool_calls: [{ index, function: { arguments: c.arguments.slice(half) } }] }));
  });
  send(chunk({}, a.toolCalls?.length ? 'tool_calls' : 'stop'));
  if (body.stream_options?.include_usage) {
    const usage = a.usage ?? { prompt_tokens: 100, completion_tokens: 10 };
    send({
      ...chunk({}),
      choices: [],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  }
  res.end('data: [DONE]\n\n');
}

function sendJson(res: ServerResponse, a: Extract<Answer, { kind: 'json' }>) {
  const usage = a.usage ?? { prompt_tokens: 50, completion_tokens: 5 };
  const toolCalls = a.toolCalls?.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1,
      model: 'test-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: a.text ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
          finish_reason: toolCalls ? 'tool_calls' : 'stop',
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    }),
  );
}

export async function startFakeOpenAI(script: (body: any) => Answer): Promise<FakeOpenAI> {
  const requests: any[] = [];
  const authorizations: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = {};
      }
      requests.push(body);
      authorizations.push(req.headers.authorization);
      let answer: Answer;
      try {
        answer = req.url?.endsWith('/chat/completions')
          ? script(body)
          : { kind: 'error', status: 404, message: `no route ${req.url}` };
      } catch (e) {
        answer = { kind: 'error', status: 400, message: String(e) };
      }
      if (answer.kind === 'error') {
        // x-should-retry: false keeps the client from retrying, so errors show at once.
        res.writeHead(answer.status, { 'content-type': 'application/json', 'x-should-retry': 'false' });
        res.end(JSON.stringify({ error: { message: answer.message, type: 'server_error' } }));
      } else if (answer.kind === 'json') {
        sendJson(res, answer);
      } else {
        sendStream(res, body, answer).catch(() => res.destroy());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
