/**
 * Secrets the service must read back (OAuth client secrets and tokens, webhook secrets) are
 * stored sealed with the cluster key: AES-256-GCM, a fresh 96-bit IV per value, the tag
 * checked on opening. A sealed value reads `v1.<iv>.<tag>.<ciphertext>` (base64url), so a
 * later key or cipher can be told apart.
 */
import crypto from 'node:crypto';

export class SecretBox {
  private key: Promise<Buffer> | undefined;

  /** `key` yields the 32-byte cluster key; asked once, when the first secret is sealed or opened. */
  constructor(private readonly keySource: () => Promise<Buffer>) {}

  private async cipherKey(): Promise<Buffer> {
    this.key ??= this.keySource().then((k) => {
      if (k.length !== 32) throw new Error(`the cluster key must be 32 bytes; got ${k.length}`);
      return k;
    });
    return this.key;
  }

  async seal(plain: string): Promise<string> {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', await this.cipherKey(), iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** Throws when the value was not sealed with this cluster's key (or was altered). */
  async open(sealed: string): Promise<string> {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) throw new Error('not a sealed secret');
    const decipher = crypto.createDecipheriv('aes-256-gcm', await this.cipherKey(), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
