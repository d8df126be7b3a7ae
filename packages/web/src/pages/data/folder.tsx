/** `/data/owner/collection/…`: one folder's files and folders, uploads, downloads, a new folder, deleting it. */
import { useRef, useState } from 'preact/hooks';
import type { DataAcl, DataDirectory } from '@algohost/client';
import { Form, SelectField, TextField } from '../../forms.js';
import { Link, navigate } from '../../router.js';
import { clientWithFetch, type SignedIn } from '../../session.js';
import { type Action, Busy, ConfirmButton, ErrorText, formatBytes, ProgressBar, Show, Time, useAction, useLoad } from '../../ui.js';
import { xhrFetch } from '../../xhr-fetch.js';
import { ACL_OPTIONS, ACLS, aclName, dataUri, listAll, pagePath } from './listing.js';

export function Folder({ session, parts }: { session: SignedIn; parts: string[] }) {
  const c = session.client;
  const path = parts.join('/');
  const uri = dataUri(path);
  const isCollection = parts.length === 2;
  const listing = useLoad<DataDirectory>(() => listAll(c, uri, isCollection), [uri]);
  const remove = useAction(async (name: string, isFolder: boolean) => {
    await c.data.delete(`${uri}/${name}`, { force: isFolder });
    listing.reload();
  });
  const removeSelf = useAction(async () => {
    await c.data.delete(uri, { force: true });
    navigate(parts.length === 2 ? '/data' : pagePath(parts.slice(0, -1).join('/')), { replace: true });
  });
  const download = useDownload(session, uri);

  return (
    <>
      <Breadcrumbs parts={parts} />
      <h1>{uri}</h1>
      <Show loaded={listing} label={uri}>
        {(dir) => (
          <>
            {isCollection && <AclForm session={session} uri={uri} acl={dir.acl} onSaved={listing.reload} />}
            <FolderTable path={path} dir={dir} remove={remove} download={download.start} />
          </>
        )}
      </Show>
      <ErrorText error={remove.error} />
      <ErrorText error={download.error} />
      {download.progress && (
        <ProgressBar value={download.progress.loaded} max={download.progress.total} label={`Downloading ${download.progress.name}`} />
      )}

      <h2>Upload files</h2>
      <Uploads session={session} uri={uri} onUploaded={listing.reload} />

      <h2>New folder</h2>
      <NewFolder session={session} uri={uri} onCreated={listing.reload} />

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

function Breadcrumbs({ parts }: { parts: string[] }) {
  return (
    <nav aria-label="Folder path">
      <ol class="breadcrumbs">
        <li>
          <Link href="/data">data</Link>
        </li>
        {parts.map((p, i) => (
          <li key={i}>
            {i === parts.length - 1 ? <span aria-current="page">{p}</span> : <Link href={pagePath(parts.slice(0, i + 1).join('/'))}>{p}</Link>}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/** A file of the folder downloaded into the browser, with its progress and its failure. */
function useDownload(session: SignedIn, uri: string) {
  const [error, setError] = useState<string | null>(null);
  const [progress, setProgress] = useState<{ name: string; loaded: number; total: number | undefined } | null>(null);
  const start = async (name: string) => {
    setError(null);
    setProgress({ name, loaded: 0, total: undefined });
    try {
      const bytes = await session.client.data.get(`${uri}/${name}`, { onProgress: (loaded, total) => setProgress({ name, loaded, total }) });
      const url = URL.createObjectURL(new Blob([bytes as BlobPart]));
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(`Could not download ${name}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setProgress(null);
    }
  };
  return { start, error, progress };
}

function FolderTable({
  path,
  dir,
  remove,
  download,
}: {
  path: string;
  dir: DataDirectory;
  remove: Action<[name: string, isFolder: boolean]>;
  download: (name: string) => Promise<void>;
}) {
  if ((dir.folders ?? []).length + (dir.files ?? []).length === 0) return <p class="muted">Empty.</p>;
  return (
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
                <button type="button" class="secondary small" aria-label={`Download ${f.filename}`} onClick={() => void download(f.filename)}>
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
  );
}

interface Upload {
  name: string;
  loaded: number;
  total: number | undefined;
  error?: string;
  done?: boolean;
}

/** A drop zone and a file chooser; each file uploads with its own progress bar. */
function Uploads({ session, uri, onUploaded }: { session: SignedIn; uri: string; onUploaded: () => void }) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [over, setOver] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);

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
    onUploaded();
  };

  return (
    <>
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
    </>
  );
}

function NewFolder({ session, uri, onCreated }: { session: SignedIn; uri: string; onCreated: () => void }) {
  const [folder, setFolder] = useState('');
  const mkdir = useAction(async () => {
    await session.client.data.mkdir(`${uri}/${folder}`);
    setFolder('');
    onCreated();
  });
  return (
    <>
      <Form
        class="inline"
        onSubmit={() => {
          if (folder) void mkdir.run();
        }}
      >
        <TextField label="Folder name" value={folder} onValue={setFolder} autoComplete="off" />
        <Busy type="submit" busy={mkdir.busy}>
          Create folder
        </Busy>
      </Form>
      <ErrorText error={mkdir.error} />
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
    <Form class="inline" onSubmit={() => void save.run()}>
      <SelectField
        label="Who may read this collection"
        error={save.error}
        value={value}
        onValue={(v) => (setValue(v), setSaved(false))}
        options={ACL_OPTIONS}
      />
      <Busy type="submit" class="secondary" busy={save.busy}>
        Change access
      </Busy>
      {saved && <span role="status">Saved.</span>}
    </Form>
  );
}
