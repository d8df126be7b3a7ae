import { useState } from 'preact/hooks';
import type { AlgorithmVersion, VersionType } from '@algohost/client';
import { Form, useProblems } from '../../forms.js';
import { Busy, Dialog, ErrorText, Field, Show, Time, useAction, useLoad } from '../../ui.js';
import type { TabProps } from '../algorithm.js';

/** Published versions, and (for managers) publishing the latest successful build. */
export function VersionsTab({ session, algorithm: a, manager, reload }: TabProps) {
  const c = session.client;
  const versions = useLoad(async () => (await c.versions.list(a.owner, a.name, { limit: 50 })).results, [a.id]);
  const [open, setOpen] = useState(false);
  const [published, setPublished] = useState<AlgorithmVersion | null>(null);
  return (
    <section aria-labelledby="versions">
      <div class="page-head">
        <h2 id="versions">Versions</h2>
        {manager && (
          <button type="button" onClick={() => setOpen(true)}>
            Publish a version
          </button>
        )}
      </div>
      {published && (
        <p class="success" role="status">
          Published version {published.version_info.semantic_version}.
        </p>
      )}
      <Show loaded={versions} label="versions">
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No version published yet{manager ? ': publish the latest successful build.' : '.'}</p>
          ) : (
            <div class="table-wrap" tabIndex={0}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Version</th>
                    <th scope="col">Callable by</th>
                    <th scope="col" class="wide">
                      Commit
                    </th>
                    <th scope="col" class="wide">
                      Published
                    </th>
                    <th scope="col">Release notes</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((v) => (
                    <tr key={v.version_info.version_uuid ?? v.version_info.git_hash}>
                      <td>{v.version_info.semantic_version}</td>
                      <td>{v.settings.algorithm_callability}</td>
                      <td class="wide">
                        <code>{v.version_info.git_hash.slice(0, 8)}</code>
                      </td>
                      <td class="wide">
                        <Time iso={v.version_info.published_at} />
                      </td>
                      <td>{v.version_info.release_notes || <span class="muted">—</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      {manager && (
        <PublishDialog
          open={open}
          onClose={() => setOpen(false)}
          publish={async (input) => {
            const v = await c.versions.publish(a.owner, a.name, input);
            setPublished(v);
            setOpen(false);
            versions.reload();
            reload();
          }}
        />
      )}
    </section>
  );
}

/** The API's limit on release notes and each sample (version_info), in characters. */
const MAX_TEXT = 64 * 1024;
const tooLong = (text: string) => (text.length > MAX_TEXT ? `At most ${MAX_TEXT.toLocaleString('en')} characters.` : null);

function PublishDialog({
  open,
  onClose,
  publish,
}: {
  open: boolean;
  onClose: () => void;
  publish: (input: Parameters<TabProps['session']['client']['versions']['publish']>[2]) => Promise<void>;
}) {
  const [type, setType] = useState<VersionType>('minor');
  const [notes, setNotes] = useState('');
  const [callability, setCallability] = useState<'public' | 'private'>('private');
  const [sampleInput, setSampleInput] = useState('');
  const [sampleOutput, setSampleOutput] = useState('');
  const problems = useProblems();
  const problem = tooLong(notes) ?? tooLong(sampleInput) ?? tooLong(sampleOutput);
  const action = useAction(() =>
    publish({
      version_info: {
        version_type: type,
        release_notes: notes || undefined,
        sample_input: sampleInput || undefined,
        sample_output: sampleOutput || undefined,
      },
      settings: { algorithm_callability: callability },
    }),
  );
  return (
    <Dialog
      title="Publish a version"
      open={open}
      onClose={() => {
        action.clear();
        problems.hide();
        onClose();
      }}
    >
      <Form onSubmit={() => problems.submit(problem, () => void action.run())}>
        <p class="hint">Publishes the latest successful build under the next version number; numbers only ever go up.</p>
        <fieldset>
          <legend>Version type</legend>
          {(
            [
              ['major', 'Major: breaks callers (1.0.0 → 2.0.0)'],
              ['minor', 'Minor: new features (1.0.0 → 1.1.0)'],
              ['revision', 'Revision: fixes (1.0.0 → 1.0.1)'],
            ] as [VersionType, string][]
          ).map(([v, l]) => (
            <label class="check" key={v}>
              <input type="radio" name="version_type" value={v} checked={type === v} onChange={() => setType(v)} />
              {l}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Who may call it</legend>
          <label class="check">
            <input
              type="radio"
              name="callability"
              value="private"
              checked={callability === 'private'}
              onChange={() => setCallability('private')}
            />
            Private: the owner and members
          </label>
          <label class="check">
            <input
              type="radio"
              name="callability"
              value="public"
              checked={callability === 'public'}
              onChange={() => setCallability('public')}
            />
            Public: everyone on this cluster (makes the algorithm public)
          </label>
        </fieldset>
        <Field label="Release notes" error={problems.shown(tooLong(notes))}>
          {(p) => <textarea {...p} value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />}
        </Field>
        <Field label="Sample input" error={problems.shown(tooLong(sampleInput))}>
          {(p) => <textarea {...p} class="mono" value={sampleInput} onInput={(e) => setSampleInput(e.currentTarget.value)} />}
        </Field>
        <Field label="Sample output" error={problems.shown(tooLong(sampleOutput))}>
          {(p) => <textarea {...p} class="mono" value={sampleOutput} onInput={(e) => setSampleOutput(e.currentTarget.value)} />}
        </Field>
        <ErrorText error={action.error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
          <Busy type="submit" busy={action.busy}>
            Publish
          </Busy>
        </div>
      </Form>
    </Dialog>
  );
}
