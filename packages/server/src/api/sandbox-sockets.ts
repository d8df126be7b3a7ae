/**
 * The API socket of sandboxes: every runner of a `pipeline_enabled` algorithm gets a Unix socket
 * of its own, bound into its sandbox (runtime/runner/runner-factory.ts), served by an HTTP server
 * of its own with the node's request handler. So the node knows whose code each connection comes
 * from, without an address:
 * - each sandbox holds at most `maxConnectionsPerSandbox` connections (more are answered 503 and
 *   closed), counted apart from the node's TCP capacity (api/connection-limits.ts), which a
 *   tenant's runners therefore never use up;
 * - its requests are charged to the account whose code runs there (the algorithm's owner) where
 *   a TCP request is charged to its address: request-rate limits (api/rate-limits.ts) and the
 *   sign-in throttle (domain/accounts/sign-in-throttle.ts).
 */
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { clientOf, refuse } from './connection-limits.js';

/** Whose sandbox a connection of the API socket comes from. */
interface SandboxClient {
  /** What its requests are charged to in the node's counters (never an address). */
  readonly key: string;
  /** How refusals name it. */
  readonly label: string;
}

const SANDBOX = Symbol('algohost.sandbox');
type TaggedSocket = net.Socket & { [SANDBOX]?: SandboxClient };

/** The sandbox `socket` comes from; undefined for a TCP connection. */
export function sandboxOf(socket: net.Socket): SandboxClient | undefined {
  return (socket as TaggedSocket)[SANDBOX];
}

/**
 * What a request on `socket` is charged to where there is no credential (yet): a sandbox's owner,
 * or the TCP client's address (IPv6: its /64).
 */
export function chargedClientOf(socket: net.Socket): string {
  return sandboxOf(socket)?.key ?? clientOf(socket.remoteAddress);
}

interface SandboxSocketOptions {
  /** Connections one sandbox may hold at once; 0 = no limit. */
  maxConnectionsPerSandbox: number;
  /** Makes the HTTP server of one socket (the node's timeouts and request handler). */
  makeServer(): http.Server;
}

export class SandboxApiSockets {
  private readonly servers = new Set<http.Server>();

  constructor(private readonly opts: SandboxSocketOptions) {}

  /**
   * Serves the API on a new Unix socket at `file` for a sandbox running `owner`'s code;
   * `close()` once the sandbox is gone (its connections end with it).
   */
  async listen(file: string, owner: { id: string; name: string }): Promise<{ close(): Promise<void> }> {
    const client: SandboxClient = { key: `runner:${owner.id}`, label: `the runners of ${owner.name}` };
    const budget = this.opts.maxConnectionsPerSandbox;
    const server = this.opts.makeServer();
    const held = new Set<net.Socket>();
    // Before the HTTP server reads anything from the connection (it listens from its making).
    server.prependListener('connection', (socket: net.Socket) => {
      if (budget > 0 && held.size >= budget) {
        refuse(socket, 503, `this sandbox holds as many connections to the API as it may (${budget}); close one or retry shortly`);
        return;
      }
      (socket as TaggedSocket)[SANDBOX] = client;
      held.add(socket);
      socket.once('close', () => held.delete(socket));
    });
    await fs.promises.rm(file, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // The sandbox's uid connects; nothing else of the host's file system is reachable from it.
    await fs.promises.chmod(file, 0o666);
    this.servers.add(server);
    let closing: Promise<void> | undefined;
    return {
      close: () =>
        (closing ??= new Promise<void>((resolve) => {
          this.servers.delete(server);
          server.close(() => resolve());
          for (const socket of held) socket.destroy();
        })),
    };
  }

  /** Stops every socket (the node is stopping; runners have stopped before). */
  async closeAll(): Promise<void> {
    const all = [...this.servers];
    this.servers.clear();
    await Promise.all(
      all.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  }
}
