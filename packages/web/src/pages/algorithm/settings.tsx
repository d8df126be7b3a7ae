import type { AlgorithmUpdate } from '@algohost/client';
import { useState } from 'preact/hooks';
import { Checkbox, Form, SelectField, TextAreaField, TextField, useFields } from '../../forms.js';
import { navigate } from '../../router.js';
import { Busy, ConfirmButton, ErrorText, useAction } from '../../ui.js';
import { LICENSES } from '../create-algorithm/runtime.js';
import type { TabProps } from '../algorithm.js';

/** Edit details and settings; delete the algorithm after typing its name. */
export function SettingsTab(props: TabProps) {
  return (
    <>
      <EditSettings {...props} />
      <DeleteAlgorithm {...props} />
    </>
  );
}

function EditSettings({ session, algorithm: a, reload }: TabProps) {
  const { values: v, set } = useFields(() => ({
    label: a.details.label ?? '',
    summary: a.details.summary ?? '',
    tagline: a.details.tagline ?? '',
    license: a.settings.license,
    visibility: a.settings.source_visibility,
    network: a.settings.network_access,
    pipelines: a.settings.pipeline_enabled,
  }));
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await session.client.algorithms.patch(a.owner, a.name, {
      details: { label: v.label, summary: v.summary, tagline: v.tagline },
      // The selects offer only values of the API's enums.
      settings: {
        license: v.license,
        source_visibility: v.visibility,
        network_access: v.network,
        pipeline_enabled: v.pipelines,
      } as AlgorithmUpdate['settings'],
    });
    setSaved(true);
    reload();
  });
  return (
    <section aria-labelledby="edit">
      <h2 id="edit">Details and settings</h2>
      <Form onSubmit={() => void save.run()}>
        <div class="grid-2">
          <div>
            <TextField label="Label" value={v.label} onValue={set('label')} />
            <TextAreaField label="Summary" value={v.summary} onValue={set('summary')} />
            <TextField label="Tagline" value={v.tagline} onValue={set('tagline')} />
          </div>
          <div>
            <SelectField label="License" value={v.license} onValue={set('license')} options={LICENSES} />
            <SelectField
              label="Source visibility"
              value={v.visibility}
              onValue={set('visibility')}
              options={[
                ['closed', 'Closed'],
                ['open', 'Open'],
              ]}
            />
            <SelectField
              label="Network access"
              value={v.network}
              onValue={set('network')}
              options={[
                ['isolated', 'Isolated'],
                ['full', 'Full'],
              ]}
            />
            <Checkbox checked={v.pipelines} onValue={set('pipelines')}>
              Pipelines (calls to other algorithms and hosted data)
            </Checkbox>
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
      </Form>
    </section>
  );
}

function DeleteAlgorithm({ session, algorithm: a }: TabProps) {
  const remove = useAction(async () => {
    await session.client.algorithms.delete(a.owner, a.name);
    navigate('/', { replace: true });
  });
  return (
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
  );
}
