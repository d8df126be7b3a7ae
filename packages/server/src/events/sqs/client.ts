/**
 * An SQS client for one flow's queue: the region and endpoint its URL names, and the flow's own
 * credentials only (its static keys, or its role assumed as its owning account), never the
 * node's own for the queue itself.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import type { AssumeRoleIdentity, SqsCredentials } from '../../domain/events/queue-credentials.js';

/** Where the node's SQS clients go besides AWS (the operator's settings). */
export interface SqsPlace {
  /** Region for queue URLs outside AWS (ElasticMQ and other SQS-compatible servers). */
  defaultRegion: string;
  /** Where roles are assumed (ALGOHOST_SQS_STS_ENDPOINT); unset = AWS STS for the queue's region. */
  stsEndpoint?: string;
}

type RoleCredentials = ReturnType<typeof fromTemporaryCredentials>;

export function sqsClient(
  queue: { flowId: string; url: string; credentials: SqsCredentials },
  place: SqsPlace,
  options: { maxAttempts: number; timeoutMs?: number },
): SQSClient {
  const url = new URL(queue.url);
  const aws = /^sqs\.([a-z0-9-]+)\.amazonaws\.com/.exec(url.host) ?? /^([a-z0-9-]+)\.queue\.amazonaws\.com/.exec(url.host);
  const region = aws?.[1] ?? place.defaultRegion;
  const c = queue.credentials;
  const credentials =
    'roleArn' in c
      ? assumedRole(queue.flowId, c, region, place.stsEndpoint, options.maxAttempts)
      : { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey };
  return new SQSClient({
    region,
    ...(aws ? {} : { endpoint: url.origin }),
    credentials,
    maxAttempts: options.maxAttempts,
    ...(options.timeoutMs ? { requestHandler: { connectionTimeout: options.timeoutMs, requestTimeout: options.timeoutMs } } : {}),
  });
}

/** The queue's ApproximateNumberOfMessages: what waits in it, not counting messages in delivery. */
export async function queueDepth(client: SQSClient, url: string, signal?: AbortSignal): Promise<number> {
  const attrs = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
    signal ? { abortSignal: signal } : {},
  );
  return Number(attrs.Attributes?.ApproximateNumberOfMessages ?? 0);
}

/**
 * The flow's role, assumed with the node's own credentials as the owning account: its ExternalId
 * (which the role's trust policy requires) and a SourceIdentity naming it. A refusal says what
 * the trust policy must hold, for the owner who reads the flow's state.
 */
function assumedRole(
  flowId: string,
  role: { roleArn: string } & AssumeRoleIdentity,
  region: string,
  stsEndpoint: string | undefined,
  maxAttempts: number,
): RoleCredentials {
  const assume = fromTemporaryCredentials({
    params: {
      RoleArn: role.roleArn,
      RoleSessionName: `algohost-flow-${flowId}`,
      ExternalId: role.externalId,
      SourceIdentity: role.sourceIdentity,
    },
    clientConfig: { region, ...(stsEndpoint ? { endpoint: stsEndpoint } : {}), maxAttempts: Math.min(2, maxAttempts) },
  });
  return async (props) => {
    try {
      return await assume(props);
    } catch (err) {
      const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw new Error(
        `assuming ${role.roleArn} was refused (${reason}); its trust policy must let the algohost nodes assume it ` +
          `(sts:AssumeRole and sts:SetSourceIdentity) with the condition {"StringEquals": {"sts:ExternalId": "${role.externalId}"}}`,
        { cause: err },
      );
    }
  };
}
