import { useRef, useState } from 'preact/hooks';
import type { DataAcl, DataDirectory } from '@algohost/client';
import { Link, navigate } from '../router.js';
import { clientWithFetch, myOrganizations, type SignedIn } from '../session.js';
import { Busy, ConfirmButton, ErrorText, Field, formatBytes, ProgressBar, Show, Time, useAction, useLoad, useTitle } from '../ui.js';
import { xhrFetch } from '../xhr-fetch.js';
import { nameProblem } from './create-algorithm.js';

const ACLS: [string, string, DataAcl][] = [
  ['private', 'Private: only the owner (and organization members)', { read: [] }],
  ['algorithms', "Owner's algorithms may read it", { read: ['algo://.my/*'] }],
  ['public', 'Public: anyone may read it', { read: ['user://*'] }],
];

function aclName(acl: DataAcl | undefined): string {
  const read = acl?.read ?? [];
  if (read.includes('user://*')) return 'public';
  if (read.includes('algo://.my/*')) return 'algorithms';
  return 'private';
}

const dataUri = (path: string) => `data://${path}`;

/** A whole folder: the API pages folders first and files after them, so follow every marker. */
async function listAll(c: SignedIn['client'], uri: string, acl: boolean): Promise<DataDirectory> {
  const all: DataDirectory = { folders: [], files: [] };
  let marker: string | undefined;
  for (;;) {
    const page = await c.data.list(uri, { limit: 1000, marker, acl: acl && marker === undefined });
    all.folders!.push(...(page.folders ?? []));
    all.files!.push(...(page.files ?? []));
    all.acl ??= page.acl;
    if (!page.marker || page.marker === marker) return all;
    marker = page.marker;
  }
}
const pagePath = (path: string) => `/data/${path.split('/').map(encodeURIComponent).join('/')}`;

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
  const [touched, setTouched] = useState(false);
  const problem = nameProblem(name, 255);
  const create = useAction(async () => {
    await c.data.mkdir(`${dataUri(owner)}/${name}`, { acl: ACLS.find(([id]) => id === acl)![2] });
    setName('');
    setTouched(false);
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
                  <span class="badge">{aclName(f.acl)}</span>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setTouched(true);
          if (!problem) void create.run();
        }}
      >
        <Field label={`New collection of ${owner}`} error={touched ? problem : null}>
          {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Field label="Who may read it">
          {(p) => (
            <select {...p} value={acl} onChange={(e) => setAcl(e.currentTarget.value)}>
              {ACLS.map(([id, label]) => (
                <option key={id} value={id}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Busy type="submit" busy={create.busy}>
          Create collection
        </Busy>
      </form>
      <ErrorText error={create.error} />
    </section>
  );
}

interface Upload {
  name: string;
  loaded: number;
  total: number | undefined;
  error?: string;
  done?: boolean;
}

function Folder({ session, parts }: { session: SignedIn; parts: string[] }) {
  const c = session.client;
  const path = parts.join('/');
  const uri = dataUri(path);
  const isCollection = parts.length === 2;
  const listing = useLoad<DataDirectory>(() => listAll(c, uri, isCollection), [uri]);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [over, setOver] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const [folder, setFolder] = useState('');
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const [downloading, setDownloading] = useState<{ name: string; loaded: number; total: number | undefined } | null>(null);

  const upload = async (files: FileList | File[]) => {
    for (const file of Array.from(files)) {
      const update = (u: Partial<Upload>) => setUploads((list) => list.map((x) => (x.name === file.name ? { ...x, ...u } : x)));
      setUploads((list) => [...list.filter((x) => x.name !== file.name), { name: file.name, loaded: 0, total: file.size }]);
      try {
        const uploader = clientWithFetch(
          session,
          xhrFetch((loaded, total) => update({ loaded, total })),
        );
        await uploader.data.put(`${uri}/${file.name}`, file);
        update({ loaded: file.size, done: true });
      } catch (err) {
        update({ error: err instanceof Error ? err.message : String(err) });
      }
    }
    listing.reload();
  };

  const download = async (name: string) => {
    setDownloadError(null);
    setDownloading({ name, loaded: 0, total: undefined });
    try {
      const bytes = await c.data.get(`${uri}/${name}`, { onProgress: (loaded, total) => setDownloading({ name, loaded, total }) });
      const url = URL.createObjectURL(new Blob([bytes as BlobPart]));
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setDownloadError(`Could not download ${name}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setDownloading(null);
    }
  };

  const mkdir = useAction(async () => {
    await c.data.mkdir(`${uri}/${folder}`);
    setFolder('');
    listing.reload();
  });
  const remove = useAction(async (name: string, isFolder: boolean) => {
    await c.data.delete(`${uri}/${name}`, { force: isFolder });
    listing.reload();
  });
  const removeSelf = useAction(async () => {
    await c.data.delete(uri, { force: true });
    navigate(parts.length === 2 ? '/data' : pagePath(parts.slice(0, -1).join('/')), { replace: true });
  });

  return (
    <>
      <nav aria-label="Folder path">
        <ol class="breadcrumbs">
          <li>
            <Link href="/data">data</Link>
          </li>
          {parts.map((p, i) => (
            <li key={i}>
              {i === parts.length - 1 ? (
                <span aria-current="page">{p}</span>
              ) : (
                <Link href={pagePath(parts.slice(0, i + 1).join('/'))}>{p}</Link>
              )}
            </li>
          ))}
        </ol>
      </nav>
      <h1>{uri}</h1>
      <Show loaded={listing} label={uri}>
        {(dir) => (
          <>
            {isCollection && <AclForm session={session} uri={uri} acl={dir.acl} onSaved={listing.reload} />}
            {(dir.folders ?? []).length + (dir.files ?? []).length === 0 ? (
              <p class="muted">Empty.</p>
            ) : (
              <div class="table-wrap" tabIndex={0}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Size</th>
                      <th scope="col" class="wide">
                        Modified
                      </th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {(dir.folders ?? []).map((f) => (
                      <tr key={`d-${f.name}`}>
                        <td>
                          <Link href={pagePath(`${path}/${f.name}`)}>{f.name}/</Link>
                        </td>
                        <td class="muted">folder</td>
                        <td class="wide" />
                        <td>
                          <button
                            type="button"
                            class="secondary small"
                            aria-label={`Delete folder ${f.name}`}
                            onClick={() => void remove.run(f.name, true)}
                          >
                            Delete
                          </button>
                        </td>
                      </tr>
                    ))}
                    {(dir.files ?? []).map((f) => (
                      <tr key={`f-${f.filename}`}>
                        <td>{f.filename}</td>
                        <td>{formatBytes(f.size)}</td>
                        <td class="wide">
                          <Time iso={f.last_modified} />
                        </td>
                        <td class="actions">
                          <button
                            type="button"
                            class="secondary small"
                            aria-label={`Download ${f.filename}`}
                            onClick={() => void download(f.filename)}
                          >
                            Download
                          </button>
                          <button
                            type="button"
                            class="secondary small"
                            aria-label={`Delete ${f.filename}`}
                            onClick={() => void remove.run(f.filename, false)}
                          >
                            Delete
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </Show>
      <ErrorText error={remove.error} />
      <ErrorText error={downloadError} />
      {downloading && <ProgressBar value={downloading.loaded} max={downloading.total} label={`Downloading ${downloading.name}`} />}

      <h2>Upload files</h2>
      <div
        class={`dropzone${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer?.files.length) void upload(e.dataTransfer.files);
        }}
      >
        <p>Drop files here, or</p>
        <input
          id="upload-input"
          ref={fileInput}
          class="visually-hidden"
          type="file"
          multiple
          onChange={(e) => {
            const files = e.currentTarget.files;
            if (files?.length) void upload(Array.from(files));
            if (fileInput.current) fileInput.current.value = '';
          }}
        />
        <label class="button secondary" for="upload-input">
          Choose files
        </label>
      </div>
      {uploads.length > 0 && (
        <ul class="rows" aria-label="Uploads">
          {uploads.map((u) => (
            <li key={u.name}>
              <span>{u.name}</span>
              {u.error ? (
                <span class="error" role="alert">
                  {u.error}
                </span>
              ) : u.done ? (
                <span class="badge status-succeeded">uploaded</span>
              ) : (
                <ProgressBar value={u.loaded} max={u.total} label={`Uploading ${u.name}`} />
              )}
            </li>
          ))}
        </ul>
      )}

      <h2>New folder</h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          if (folder) void mkdir.run();
        }}
      >
        <Field label="Folder name">
          {(p) => <input {...p} value={folder} onInput={(e) => setFolder(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Busy type="submit" busy={mkdir.busy}>
          Create folder
        </Busy>
      </form>
      <ErrorText error={mkdir.error} />

      <h2>Delete</h2>
      <ConfirmButton
        label={isCollection ? 'Delete collection' : 'Delete folder'}
        question={<p>Delete {uri} and everything in it?</p>}
        confirmText={parts[parts.length - 1]}
        onConfirm={() => removeSelf.run()}
        busy={removeSelf.busy}
        error={removeSelf.error}
      />
    </>
  );
}

function AclForm({ session, uri, acl, onSaved }: { session: SignedIn; uri: string; acl: DataAcl | undefined; onSaved: () => void }) {
  const [value, setValue] = useState(aclName(acl));
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await session.client.data.setAcl(uri, ACLS.find(([id]) => id === value)![2]);
    setSaved(true);
    onSaved();
  });
  return (
    <form
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <Field label="Who may read this collection" error={save.error}>
        {(p) => (
          <select {...p} value={value} onChange={(e) => (setValue(e.currentTarget.value), setSaved(false))}>
            {ACLS.map(([id, label]) => (
              <option key={id} value={id}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Busy type="submit" class="secondary" busy={save.busy}>
        Change access
      </Busy>
      {saved && <span role="status">Saved.</span>}
    </form>
  );
}
