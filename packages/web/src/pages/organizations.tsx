import { useState } from 'preact/hooks';
import type { Invitation, OrganizationInput, OrganizationMember } from '@algohost/client';
import { Form, type Options, SelectField, TextField, useProblems } from '../forms.js';
import { Link, navigate } from '../router.js';
import { refreshMe, type SignedIn } from '../session.js';
import { Busy, ConfirmButton, ErrorText, Field, type Loaded, Show, Table, Time, useAction, useLoad, useTitle } from '../ui.js';
import { nameProblem } from './create-algorithm.js';

/** The organizations I belong to, invitations waiting for me, and creating one. */
export function OrganizationsPage({ session }: { session: SignedIn }) {
  useTitle('Organizations');
  const c = session.client;
  const me = session.me.username;
  const invitations = useLoad(() => c.users.invitations(me), [me]);
  const answer = useAction(async (org: string, accept: boolean) => {
    if (accept) await c.users.acceptInvitation(me, org);
    else await c.users.declineInvitation(me, org);
    invitations.reload();
    await refreshMe();
  });
  const orgs = session.me.organizations ?? [];
  return (
    <>
      <h1>Organizations</h1>
      <section aria-labelledby="mine">
        <h2 id="mine">Yours</h2>
        {orgs.length === 0 ? (
          <p class="muted">You belong to no organization.</p>
        ) : (
          <ul class="rows">
            {orgs.map((o) => (
              <li key={o.name}>
                <Link href={`/organizations/${o.name}`}>{o.name}</Link> <span class="badge">{o.role}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="invitations">
        <h2 id="invitations">Invitations</h2>
        <Show loaded={invitations} label="your invitations">
          {(list) =>
            list.length === 0 ? (
              <p class="muted">No invitation is waiting for you.</p>
            ) : (
              <ul class="rows">
                {list.map((i) => (
                  <li key={i.org_name}>
                    <span>
                      <strong>{i.org_name}</strong> invites you as {i.role}
                      {i.invited_by ? ` (from ${i.invited_by})` : ''}
                    </span>
                    <Busy type="button" class="small" busy={answer.busy} onClick={() => void answer.run(i.org_name, true)}>
                      Accept {i.org_name}
                    </Busy>
                    <Busy type="button" class="secondary small" busy={answer.busy} onClick={() => void answer.run(i.org_name, false)}>
                      Decline {i.org_name}
                    </Busy>
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
        <ErrorText error={answer.error} />
      </section>
      <CreateOrganization session={session} />
    </>
  );
}

function CreateOrganization({ session }: { session: SignedIn }) {
  const c = session.client;
  const types = useLoad(() => c.organizations.types(), []);
  const [name, setName] = useState('');
  const [label, setLabel] = useState('');
  const [contact, setContact] = useState('');
  const [email, setEmail] = useState('');
  const [url, setUrl] = useState('');
  const [type, setType] = useState('');
  const problems = useProblems();
  const problem = nameProblem(name, 30);
  const create = useAction(async () => {
    await c.organizations.create({
      org_name: name,
      org_label: label || name,
      org_contact_name: contact || null,
      org_email: email || null,
      org_url: url || null,
      // The select offers only the types GET /v1/organization/types lists.
      ...(type ? { type_id: type as NonNullable<OrganizationInput['type_id']> } : {}),
    });
    await refreshMe();
    navigate(`/organizations/${name}`);
  });
  return (
    <section aria-labelledby="create-org">
      <h2 id="create-org">Create an organization</h2>
      <Form onSubmit={() => problems.submit(problem, () => void create.run())}>
        <div class="grid-2">
          <div>
            <TextField
              label="Organization name"
              hint="Used in URLs: letters, digits and underscores."
              error={problems.shown(problem)}
              value={name}
              onValue={setName}
              onBlur={problems.reveal}
              autoComplete="off"
            />
            <TextField label="Display name" value={label} onValue={setLabel} />
            <Show loaded={types} label="organization types">
              {(list) => (
                <SelectField
                  label="Type"
                  value={type}
                  onValue={setType}
                  options={[['', 'Default'], ...list.map((t) => [t.id, t.name] as const)]}
                />
              )}
            </Show>
          </div>
          <div>
            <TextField label="Contact name" value={contact} onValue={setContact} />
            <Field label="Contact email">
              {(p) => <input {...p} type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
            </Field>
            <Field label="Website">{(p) => <input {...p} type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />}</Field>
          </div>
        </div>
        <ErrorText error={create.error} />
        <Busy type="submit" busy={create.busy}>
          Create organization
        </Busy>
      </Form>
    </section>
  );
}

/** One organization: its details, members and their roles, invitations. */
export function OrganizationPage({ session, org }: { session: SignedIn; org: string }) {
  useTitle(org);
  const c = session.client;
  const myRole = session.me.organizations?.find((o) => o.name.toLowerCase() === org.toLowerCase())?.role;
  const canManage = myRole === 'owner' || session.me.admin;
  const details = useLoad(() => c.organizations.get(org), [org]);
  const members = useLoad(() => c.organizations.members(org), [org]);
  const invitations = useLoad<Invitation[]>(() => (canManage ? c.organizations.invitations(org) : Promise.resolve([])), [org, canManage]);
  return (
    <>
      <nav aria-label="Breadcrumb">
        <ol class="breadcrumbs">
          <li>
            <Link href="/organizations">Organizations</Link>
          </li>
          <li>
            <span aria-current="page">{org}</span>
          </li>
        </ol>
      </nav>
      <Show loaded={details} label={org}>
        {(o) => (
          <>
            <h1>{o.org_label || o.org_name}</h1>
            <dl class="kv">
              <dt>Name</dt>
              <dd>{o.org_name}</dd>
              <dt>Contact</dt>
              <dd>{[o.org_contact_name, o.org_email].filter(Boolean).join(' · ') || <span class="muted">—</span>}</dd>
              <dt>Website</dt>
              <dd>{o.org_url || <span class="muted">—</span>}</dd>
              <dt>Your role</dt>
              <dd>{myRole ?? (session.me.admin ? 'cluster admin' : 'none')}</dd>
            </dl>
          </>
        )}
      </Show>
      <Members session={session} org={org} members={members} canManage={canManage} />
      {canManage && <AddMember session={session} org={org} members={members} invitations={invitations} />}
    </>
  );
}

type Role = 'member' | 'owner';

/** The members and their roles; an owner (or an admin) changes a role or removes a member here. */
function Members({
  session,
  org,
  members,
  canManage,
}: {
  session: SignedIn;
  org: string;
  members: Loaded<OrganizationMember[]>;
  canManage: boolean;
}) {
  const c = session.client;
  const changeRole = useAction(async (user: string, newRole: Role) => {
    await c.organizations.addMember(org, user, newRole);
    members.reload();
  });
  const remove = useAction(async (user: string) => {
    await c.organizations.removeMember(org, user);
    members.reload();
    if (user.toLowerCase() === session.me.username.toLowerCase()) await refreshMe();
  });
  return (
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      <Show loaded={members} label="members">
        {(list) => (
          <Table
            rows={list}
            rowKey={(m) => m.username}
            columns={[
              { header: 'User', cell: (m) => m.username },
              {
                header: 'Role',
                cell: (m) =>
                  canManage ? (
                    <select
                      aria-label={`Role of ${m.username}`}
                      value={m.role}
                      onChange={(e) => void changeRole.run(m.username, e.currentTarget.value as Role)}
                    >
                      <option value="member">member</option>
                      <option value="owner">owner</option>
                    </select>
                  ) : (
                    m.role
                  ),
              },
              canManage && {
                header: 'Remove',
                cell: (m) => (
                  <ConfirmButton
                    label={`Remove ${m.username}`}
                    question={
                      <p>
                        Remove {m.username} from {org}?
                      </p>
                    }
                    onConfirm={() => remove.run(m.username)}
                    busy={remove.busy}
                    error={remove.error}
                  />
                ),
              },
            ]}
          />
        )}
      </Show>
      <ErrorText error={changeRole.error} />
    </section>
  );
}

/** Adding a member (an invitation, unless a cluster admin adds), and the invitations not yet accepted. */
function AddMember({
  session,
  org,
  members,
  invitations,
}: {
  session: SignedIn;
  org: string;
  members: Loaded<OrganizationMember[]>;
  invitations: Loaded<Invitation[]>;
}) {
  const c = session.client;
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [notice, setNotice] = useState<string | null>(null);
  const add = useAction(async () => {
    setNotice(null);
    const invitation = await c.organizations.addMember(org, username, role);
    setNotice(invitation ? `Invited ${username}: they become a member when they accept.` : `${username} is now a ${role}.`);
    setUsername('');
    members.reload();
    invitations.reload();
  });
  const withdraw = useAction(async (user: string) => {
    await c.organizations.withdrawInvitation(org, user);
    invitations.reload();
  });
  return (
    <section aria-labelledby="add-member">
      <h2 id="add-member">Add a member</h2>
      <p class="hint">An owner's request is an invitation: the user becomes a member by accepting it. A cluster admin adds at once.</p>
      <Form class="inline" onSubmit={() => void add.run()}>
        <TextField label="Username" required value={username} onValue={setUsername} autoComplete="off" />
        <SelectField label="Role" value={role} onValue={(r) => setRole(r as Role)} options={ROLES} />
        <Busy type="submit" busy={add.busy}>
          Add member
        </Busy>
      </Form>
      <ErrorText error={add.error} />
      {notice && (
        <p class="success" role="status">
          {notice}
        </p>
      )}
      <h3>Pending invitations</h3>
      <Show loaded={invitations} label="invitations">
        {(list) =>
          list.length === 0 ? (
            <p class="muted">None.</p>
          ) : (
            <ul class="rows">
              {list.map((i) => (
                <li key={i.username}>
                  {i.username} as {i.role} · <Time iso={i.created_at} />
                  <Busy type="button" class="secondary small" busy={withdraw.busy} onClick={() => void withdraw.run(i.username)}>
                    Withdraw {i.username}
                  </Busy>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      <ErrorText error={withdraw.error} />
    </section>
  );
}

const ROLES: Options = [
  ['member', 'member'],
  ['owner', 'owner'],
];
