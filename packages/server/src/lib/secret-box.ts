/**
 * Encrypts credentials kept at rest (broker passwords, queue secrets) with the cluster key
 * (ALGOHOST_CLUSTER_KEY, or the key generated into the data directory on first start): AES-256-GCM,
 * a fresh 96-bit nonce per value, stored as `v1.<nonce>.<tag>.<ciphertext>` (base64url). The
 * database alone never reveals them; a value altered in the database fails to open.
 */
import crypto from 'node:crypto';

export class SecretBox {
  private readonly key: Buffer;

  /** `key`: 32 bytes. */
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error(`the cluster key must be 32 bytes; got ${key.length}`);
    this.key = Buffer.from(key);
  }

  seal(plaintext: string): string {
    const nonce = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', nonce, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /**
   * A value derived from the cluster key for one purpose (HMAC-SHA256 of `purpose` and `subject`):
   * the same on every node of a cluster and across restarts, and unguessable without the key.
   * Distinct purposes never yield each other's values.
   */
  derive(purpose: string, subject: string): Buffer {
    return crypto.createHmac('sha256', this.key).update(purpose).update('\0').update(subject).digest();
  }

  /** Throws when the value was not sealed with this key or was altered. */
  open(sealed: string): string {
    const [version, nonce, tag, body] = sealed.split('.');
    if (version !== 'v1' || nonce === undefined || tag === undefined || body === undefined) {
      throw new Error('not a sealed value');
    }
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
