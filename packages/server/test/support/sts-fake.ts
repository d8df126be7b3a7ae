/**
 * A FAKE of AWS STS for tests (AWS's STS cannot run here): an HTTP server answering the Query
 * protocol's `AssumeRole`, which the node reaches through ALGOHOST_SQS_STS_ENDPOINT. It records
 * every request (the signing key id from the SigV4 Authorization header, RoleArn, ExternalId,
 * SourceIdentity, RoleSessionName) and applies each role's trust policy as STS would: a role
 * registered with a required ExternalId is refused (403 AccessDenied) to a request that does not
 * carry exactly that ExternalId. Granted sessions get made-up credentials (SQS-compatible test
 * servers accept any).
 *
 * Not implemented (the node does not use them): other STS actions, policy evaluation beyond the
 * ExternalId condition, signature verification.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AssumeRoleRequest {
  /** The access key id that signed the request (the node's own credentials). */
  signedBy: string | null;
  roleArn: string;
  externalId: string | null;
  sourceIdentity: string | null;
  sessionName: string;
  granted: boolean;
}

export class FakeSts {
  readonly requests: AssumeRoleRequest[] = [];
  /** Role ARN → the ExternalId its trust policy requires (`"Condition": {"StringEquals": {"sts:ExternalId": …}}`). */
  private readonly trust = new Map<string, string>();
  private server: http.Server | undefined;
  url = '';

  /** Sets a role's trust policy to require this ExternalId. */
  requireExternalId(roleArn: string, externalId: string): void {
    this.trust.set(roleArn, externalId);
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.answer(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private answer(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    const form = new URLSearchParams(body);
    const requestId = crypto.randomUUID();
    if (form.get('Action') !== 'AssumeRole') {
      return xml(res, 400, error('Sender', 'InvalidAction', `${form.get('Action')} is not implemented by this fake`, requestId));
    }
    const roleArn = form.get('RoleArn') ?? '';
    const externalId = form.get('ExternalId');
    const required = this.trust.get(roleArn);
    const granted = required === undefined || externalId === required;
    const credential = /Credential=([^/,\s]+)\//.exec(req.headers.authorization ?? '');
    this.requests.push({
      signedBy: credential?.[1] ?? null,
      roleArn,
      externalId,
      sourceIdentity: form.get('SourceIdentity'),
      sessionName: form.get('RoleSessionName') ?? '',
      granted,
    });
    if (!granted) {
      // What STS says when a trust policy's condition does not match.
      return xml(
        res,
        403,
        error(
          'Sender',
          'AccessDenied',
          `User: arn:aws:iam::000000000000:user/${credential?.[1] ?? 'unknown'} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
          requestId,
        ),
      );
    }
    const session = form.get('RoleSessionName') ?? 'session';
    const expires = new Date(Date.now() + 3600_000).toISOString();
    const sourceIdentity = form.get('SourceIdentity');
    xml(
      res,
      200,
      `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>` +
        (sourceIdentity ? `<SourceIdentity>${sourceIdentity}</SourceIdentity>` : '') +
        `<AssumedRoleUser><Arn>${roleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/')}/${session}</Arn>` +
        `<AssumedRoleId>AROAFAKE:${session}</AssumedRoleId></AssumedRoleUser>` +
        `<Credentials><AccessKeyId>ASIAFAKE${crypto.randomBytes(6).toString('hex').toUpperCase()}</AccessKeyId>` +
        `<SecretAccessKey>${crypto.randomBytes(20).toString('base64url')}</SecretAccessKey>` +
        `<SessionToken>${crypto.randomBytes(32).toString('base64url')}</SessionToken><Expiration>${expires}</Expiration></Credentials>` +
        `</AssumeRoleResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
    );
  }
}

function error(type: string, code: string, message: string, requestId: string): string {
  return `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>${type}</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
}

function xml(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': crypto.randomUUID() });
  res.end(text);
}
