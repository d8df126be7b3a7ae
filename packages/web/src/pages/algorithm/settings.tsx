import type { AlgorithmUpdate } from '@algohost/client';
import { useState } from 'preact/hooks';
import { navigate } from '../../router.js';
import { Busy, ConfirmButton, ErrorText, Field, useAction } from '../../ui.js';
import { LICENSES } from '../create-algorithm/runtime.js';
import type { TabProps } from '../algorithm.js';

/** Edit details and settings; delete the algorithm after typing its name. */
export function SettingsTab({ session, algorithm: a, reload }: TabProps) {
  const c = session.client;
  const [label, setLabel] = useState(a.details.label ?? '');
  const [summary, setSummary] = useState(a.details.summary ?? '');
  const [tagline, setTagline] = useState(a.details.tagline ?? '');
  const [license, setLicense] = useState(a.settings.license);
  const [visibility, setVisibility] = useState(a.settings.source_visibility);
  const [network, setNetwork] = useState(a.settings.network_access);
  const [pipelines, setPipelines] = useState(a.settings.pipeline_enabled);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await c.algorithms.patch(a.owner, a.name, {
      details: { label, summary, tagline },
      // The selects offer only values of the API's enums.
      settings: {
        license,
        source_visibility: visibility,
        network_access: network,
        pipeline_enabled: pipelines,
      } as AlgorithmUpdate['settings'],
    });
    setSaved(true);
    reload();
  });
  const remove = useAction(async () => {
    await c.algorithms.delete(a.owner, a.name);
    navigate('/', { replace: true });
  });
  return (
    <>
      <section aria-labelledby="edit">
        <h2 id="edit">Details and settings</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <div class="grid-2">
            <div>
              <Field label="Label">{(p) => <input {...p} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />}</Field>
              <Field label="Summary">{(p) => <textarea {...p} value={summary} onInput={(e) => setSummary(e.currentTarget.value)} />}</Field>
              <Field label="Tagline">{(p) => <input {...p} value={tagline} onInput={(e) => setTagline(e.currentTarget.value)} />}</Field>
            </div>
            <div>
              <Field label="License">
                {(p) => (
                  <select {...p} value={license} onChange={(e) => setLicense(e.currentTarget.value)}>
                    {LICENSES.map(([v, l]) => (
                      <option key={v} value={v}>
                        {l}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field label="Source visibility">
                {(p) => (
                  <select {...p} value={visibility} onChange={(e) => setVisibility(e.currentTarget.value)}>
                    <option value="closed">Closed</option>
                    <option value="open">Open</option>
                  </select>
                )}
              </Field>
              <Field label="Network access">
                {(p) => (
                  <select {...p} value={network} onChange={(e) => setNetwork(e.currentTarget.value)}>
                    <option value="isolated">Isolated</option>
                    <option value="full">Full</option>
                  </select>
                )}
              </Field>
              <label class="check">
                <input type="checkbox" checked={pipelines} onChange={(e) => setPipelines(e.currentTarget.checked)} />
                Pipelines (calls to other algorithms and hosted data)
              </label>
            </div>
          </div>
          <ErrorText error={save.error} />
          {saved && (
            <p class="success" role="status">
              Saved.
            </p>
          )}
          <div class="actions">
            <Busy type="submit" busy={save.busy}>
              Save
            </Busy>
          </div>
        </form>
      </section>
      <section aria-labelledby="danger">
        <h2 id="danger">Delete</h2>
        <p>Deleting removes the algorithm, its repository, builds and versions. Callers of its versions get errors from then on.</p>
        <ConfirmButton
          label="Delete algorithm"
          question={
            <p>
              Delete <strong>{`${a.owner}/${a.name}`}</strong> for good?
            </p>
          }
          confirmText={a.name}
          onConfirm={() => remove.run()}
          busy={remove.busy}
          error={remove.error}
        />
      </section>
    </>
  );
}
