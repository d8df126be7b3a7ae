import { useState } from 'preact/hooks';
import { Form, SelectField, TextField, useProblems } from '../forms.js';
import { Link } from '../router.js';
import { myOrganizations, type SignedIn } from '../session.js';
import { Busy, ErrorText, Show, useAction, useLoad, useTitle } from '../ui.js';
import { nameProblem } from './create-algorithm.js';
import { Folder } from './data/folder.js';
import { ACL_OPTIONS, ACLS, dataUri, listAll, pagePath } from './data/listing.js';

/** `/data`: collections of me and my organizations; `/data/owner/collection/…`: a folder. */
export function DataPage({ session, path }: { session: SignedIn; path: string }) {
  const parts = path.split('/').filter(Boolean);
  useTitle(parts.length ? `data://${parts.join('/')}` : 'Data');
  if (parts.length === 0) return <Collections session={session} />;
  if (parts.length === 1) return <OwnerCollections session={session} owner={parts[0]!} />;
  return <Folder session={session} parts={parts} />;
}

function Collections({ session }: { session: SignedIn }) {
  const owners = useLoad(async () => [session.me.username, ...myOrganizations(session)], [session]);
  return (
    <>
      <h1>Data</h1>
      <p class="muted">Files algorithms read and write (data://…), in collections owned by you or your organizations.</p>
      <Show loaded={owners} label="owners">
        {(list) => list.map((owner) => <OwnerCollections key={owner} session={session} owner={owner} embedded />)}
      </Show>
    </>
  );
}

function OwnerCollections({ session, owner, embedded }: { session: SignedIn; owner: string; embedded?: boolean }) {
  const c = session.client;
  const listing = useLoad(() => listAll(c, dataUri(owner), false), [owner]);
  const [name, setName] = useState('');
  const [acl, setAcl] = useState('algorithms');
  const problems = useProblems();
  const problem = nameProblem(name, 255);
  const create = useAction(async () => {
    await c.data.mkdir(`${dataUri(owner)}/${name}`, { acl: ACLS.find(([id]) => id === acl)![2] });
    setName('');
    problems.hide();
    listing.reload();
  });
  const Heading = embedded ? 'h2' : 'h1';
  return (
    <section aria-label={`Collections of ${owner}`}>
      <Heading>
        {owner === session.me.username ? 'Your collections' : `Collections of ${owner}`}
        {embedded ? '' : ` (data://${owner})`}
      </Heading>
      <Show loaded={listing} label={`the collections of ${owner}`}>
        {(dir) =>
          (dir.folders ?? []).length === 0 ? (
            <p class="muted">No collections yet.</p>
          ) : (
            <ul class="rows">
              {(dir.folders ?? []).map((f) => (
                <li key={f.name}>
                  <Link href={pagePath(`${owner}/${f.name}`)}>{f.name}</Link>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      <Form class="inline" onSubmit={() => problems.submit(problem, () => void create.run())}>
        <TextField label={`New collection of ${owner}`} error={problems.shown(problem)} value={name} onValue={setName} autoComplete="off" />
        <SelectField label="Who may read it" value={acl} onValue={setAcl} options={ACL_OPTIONS} />
        <Busy type="submit" busy={create.busy}>
          Create collection
        </Busy>
      </Form>
      <ErrorText error={create.error} />
    </section>
  );
}
