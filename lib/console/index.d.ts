// quickrealm/console: the review console (DESIGN §9). Declarations for lib/console/.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SessionManager, SessionOptions, SessionStore } from '../session/index.js';

export { inspectSnapshot, type AuditVerification } from '../session/index.js';

/** What a reviewer does in the console; each is a POST that `authorize` must allow. */
export type ConsoleAction = 'approve' | 'reject' | 'commit' | 'rollback';

export interface ConsoleOptions {
  /** The sessions to show (its store is read); or give `store` and the console makes a manager. */
  manager?: SessionManager;
  /** Any SessionStore: FolderStore, or PostgresStore (filtered and paged in SQL). */
  store?: SessionStore;
  /**
   * The key the sessions are signed with: snapshots are shown only after their signature and
   * binding check out (one that does not is shown unverified, read-only, saying why).
   */
  snapshotKey?: string | Uint8Array;
  /** Operations of the manager the console makes from `store`. */
  operations?: SessionOptions['operations'];
  /** Where the console is mounted (`/review`). @defaultValue '/' */
  basePath?: string;
  /**
   * Allows an action: must return (or resolve to) `true`. Without it the console is read-only:
   * no forms are shown and every POST answers 403.
   */
  authorize?: (request: Request, action: ConsoleAction, sessionId: string) => boolean | Promise<boolean>;
  /** Decisions go through `fleet.approve/reject` (the resuming turn is queued with them). */
  fleet?: {
    approve(sessionId: string, approvalId: string): Promise<unknown>;
    reject(sessionId: string, approvalId: string, reason?: string): Promise<unknown>;
  };
  /** Signs CSRF tokens (HMAC-SHA256). @defaultValue 32 random bytes per console */
  csrfSecret?: string | Uint8Array;
}

/** The console as a Fetch-API handler: pages, JSON under `<base>/api/`, assets, actions. */
export declare function createConsole(options: ConsoleOptions): (request: Request) => Promise<Response>;

/** A Fetch-API handler as a listener for `http.createServer` (request bodies over 64 KiB: 413). */
export declare function toNodeListener(
  handler: (request: Request) => Promise<Response>,
): (req: IncomingMessage, res: ServerResponse) => void;
