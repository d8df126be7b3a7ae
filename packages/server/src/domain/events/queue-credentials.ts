/**
 * The credentials of queue flows: the identity the node assumes an SQS role with for an
 * account (its ExternalId and SourceIdentity), and a flow's keys, decrypted for the workers.
 */
import { Errors } from '../errors.js';
import { refuseCallKey, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import type { EventFlow } from './model.js';
import type { SecretBox } from '../../lib/secret-box.js';

/**
 * How the node names an account when it assumes an IAM role for that account's SQS flows, so a
 * role answers only its own tenant (the confused-deputy defence AWS documents): every AssumeRole
 * carries the owning account's ExternalId, which the role's trust policy requires, and a
 * SourceIdentity naming the account, which CloudTrail records.
 */
export interface AssumeRoleIdentity {
  /** Derived from the cluster key and the account's id: the same on every node, never another account's. */
  externalId: string;
  /** `algohost-<account name>`. */
  sourceIdentity: string;
}

/** The subject of an ExternalId derivation (SecretBox.derive): changing it changes every ExternalId. */
const EXTERNAL_ID_PURPOSE = 'algohost sqs assume-role external id v1';

/** The trust policy an owner pastes into the role: this cluster's node may assume it only with the owner's ExternalId. */
export function trustPolicyOf(identity: AssumeRoleIdentity): object {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: '<the IAM role or user of the algohost nodes (ask the operator)>' },
        Action: ['sts:AssumeRole', 'sts:SetSourceIdentity'],
        Condition: { StringEquals: { 'sts:ExternalId': identity.externalId } },
      },
    ],
  };
}

/** An SQS flow's credentials: a role assumed as its owning account, or its own static keys. */
export type SqsCredentials = ({ roleArn: string } & AssumeRoleIdentity) | { accessKeyId: string; secretAccessKey: string };

export class QueueCredentials {
  constructor(
    private readonly accounts: AccountStore,
    private readonly algorithms: AlgorithmStore,
    private readonly access: OwnerAccess,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * An SQS flow's credentials: a role to assume as the algorithm's owning account (its
   * ExternalId and SourceIdentity), or static keys (decrypted).
   */
  async queueCredentials(flow: EventFlow): Promise<SqsCredentials> {
    if (flow.credentialsKind === 'role') {
      const algorithm = await this.algorithms.findById(flow.algorithmId);
      if (!algorithm) throw Errors.eventFlowNotFound({ flow: flow.id });
      return { roleArn: flow.credentialsId!, ...this.assumeRoleIdentity({ id: algorithm.ownerId, name: algorithm.ownerName }) };
    }
    return { accessKeyId: flow.credentialsId!, secretAccessKey: this.secrets.open(flow.credentialsSecret!) };
  }

  /**
   * What an account's SQS flows send when they assume a role, for the account itself, its
   * organization's members and admins (the owner puts the ExternalId in the role's trust policy
   * before naming the role in a flow). Others get the account's 404, as for its listeners.
   */
  async assumeRoleSettings(p: Principal, account: string): Promise<{ account: Account; identity: AssumeRoleIdentity }> {
    refuseCallKey(p, 'reading the ExternalId of an account');
    const owner = (await this.accounts.findById(account)) ?? (await this.accounts.findByName(account));
    if (!owner || !(await this.access.canManage(p, owner))) throw Errors.accountNotFound({ name: account });
    return { account: owner, identity: this.assumeRoleIdentity(owner) };
  }

  /** What the node sends when it assumes a role for `owner`'s SQS flows. */
  assumeRoleIdentity(owner: { id: string; name: string }): AssumeRoleIdentity {
    // 192 bits of the HMAC, in ExternalId's alphabet ([\w+=,.@:/-], 2 to 1224 characters).
    const externalId = `algohost-${this.secrets.derive(EXTERNAL_ID_PURPOSE, owner.id).toString('base64url').slice(0, 32)}`;
    // Account names are letters, digits and "_", at most 30: SourceIdentity's alphabet, within its 64.
    return { externalId, sourceIdentity: `algohost-${owner.name}` };
  }

  /** A flow's secret (a key of its queue) as it is stored: sealed with the cluster key. */
  seal(secret: string): string {
    return this.secrets.seal(secret);
  }

  /** A Service Bus flow's shared access policy, its key decrypted. */
  serviceBusCredentials(flow: EventFlow): { keyName: string; key: string } {
    return { keyName: flow.credentialsId!, key: this.secrets.open(flow.credentialsSecret!) };
  }
}
