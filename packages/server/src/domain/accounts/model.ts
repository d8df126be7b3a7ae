export type AccountKind = 'user' | 'organization';

export interface OrganizationProfile {
  label: string;
  contactName: string | null;
  url: string | null;
  typeId: string;
}

export interface Account {
  id: string;
  name: string;
  kind: AccountKind;
  email: string | null;
  fullname: string | null;
  companyName: string | null;
  companyRole: string | null;
  passwordHash: string | null;
  isAdmin: boolean;
  organization: OrganizationProfile | null;
  createdAt: string;
  updatedAt: string;
}

export type MemberRole = 'owner' | 'member';

export interface Member {
  user: Account;
  role: MemberRole;
}

/** An owner's offer of membership; the user becomes a member only by accepting it. */
export interface Invitation {
  organization: Account;
  user: Account;
  role: MemberRole;
  /** Who invited: an owner, or the organization itself through its key; null once deleted. */
  invitedBy: Account | null;
  createdAt: string;
}

export const CAPABILITIES = ['manage_algorithms', 'call_algorithms', 'read_data', 'write_data'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export type KeyKind = 'standard' | 'admin';

export interface ApiKey {
  id: string;
  accountId: string;
  kind: KeyKind;
  capabilities: Capability[];
  /** First characters of the key, enough to recognise it in a list; the rest is never stored. */
  prefix: string;
  description: string | null;
  createdAt: string;
}

/** Organization types of docs/compatibility.md §6; ids are fixed so clients can map names to ids. */
export const ORGANIZATION_TYPES = [
  { id: '7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a01', name: 'basic' },
  { id: '7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a02', name: 'legacy' },
  { id: '7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a03', name: 'pro' },
] as const;
