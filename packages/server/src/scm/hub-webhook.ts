/**
 * Webhooks signed the way GitHub introduced and Gitea copies: HMAC-SHA256 of the raw body with
 * the hook's secret, hex, in `X-Hub-Signature-256: sha256=…`; a push event carries `ref` and
 * `after`.
 */
import type { PushNotice, WebhookRefusal } from '../domain/scm/ports.js';
import { header, hmacMatches, jsonObject } from './http.js';

export function readHubWebhook(
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
  secret: string,
  names: { event: string; delivery: string; signatures: string[] },
): PushNotice | WebhookRefusal {
  const signature = names.signatures.map((n) => header(headers, n)).find((v) => v !== undefined);
  if (!signature) return { refused: 'unsigned', message: `the delivery is not signed (no ${names.signatures.join(' or ')} header)` };
  if (!hmacMatches(signature, body, secret))
    return { refused: 'bad_signature', message: "the delivery signature does not match this algorithm's webhook secret" };
  const event = header(headers, names.event);
  if (event !== 'push') return { refused: 'not_a_push', message: `a "${event ?? 'unnamed'}" event: only pushes are built` };
  const deliveryId = header(headers, names.delivery);
  const payload = jsonObject(body);
  if (!deliveryId || deliveryId.length > 200) return { refused: 'malformed', message: `the delivery has no ${names.delivery} header` };
  return pushOf(deliveryId, payload?.ref, payload?.after);
}

/** A push to `refs/heads/<branch>` that leaves it at a commit (not a deletion). */
export function pushOf(deliveryId: string, ref: unknown, after: unknown): PushNotice | WebhookRefusal {
  if (typeof ref !== 'string' || typeof after !== 'string') return { refused: 'malformed', message: 'the push event has no ref or commit' };
  if (!ref.startsWith('refs/heads/')) return { refused: 'not_a_push', message: `a push to ${ref.slice(0, 200)}: only branches are built` };
  if (/^0+$/.test(after)) return { refused: 'not_a_push', message: `${ref.slice(11, 200)} was deleted: nothing to build` };
  if (!/^[0-9a-f]{40}$/.test(after)) return { refused: 'malformed', message: 'the push event names no commit id' };
  return { deliveryId, branch: ref.slice('refs/heads/'.length), commitSha: after };
}
