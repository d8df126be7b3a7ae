/** How a new algorithm runs: its language and environment, license, source visibility, network access and pipelines. */
import { useEffect, useState } from 'preact/hooks';
import type { AlgohostClient, Environment } from '@algohost/client';
import { Checkbox, RadioGroup, SelectField } from '../../forms.js';
import { Show, useLoad } from '../../ui.js';

export const LICENSES: [string, string][] = [
  ['apl', 'Algorithmia Public License (apl)'],
  ['apache2', 'Apache 2.0'],
  ['gpl3', 'GPL 3'],
  ['mit', 'MIT'],
];

export type EnvironmentChoice = ReturnType<typeof useEnvironmentChoice>;

/** The language (python3 first when there is one) and an environment of it on this cluster. */
export function useEnvironmentChoice(c: AlgohostClient, deps: unknown[]) {
  const languages = useLoad(() => c.environments.languages(), deps);
  const [language, setLanguage] = useState('');
  const [environment, setEnvironment] = useState('');
  useEffect(() => {
    if (!language && languages.data?.length) setLanguage(languages.data.find((l) => l.name === 'python3')?.name ?? languages.data[0]!.name);
  }, [languages.data]);
  const environments = useLoad<Environment[]>(() => (language ? c.environments.list(language) : Promise.resolve([])), [language]);
  useEffect(() => {
    const list = environments.data ?? [];
    if (!list.some((e) => e.id === environment)) setEnvironment(list[0]?.id ?? '');
  }, [environments.data]);
  return { languages, language, setLanguage, environments, environment, setEnvironment };
}

export interface RuntimeSettings {
  license: string;
  visibility: 'closed' | 'open';
  network: 'isolated' | 'full';
  pipelines: boolean;
}

export function RuntimeFields({
  env,
  settings,
  update,
  licenseError,
}: {
  env: EnvironmentChoice;
  settings: RuntimeSettings;
  update: (patch: Partial<RuntimeSettings>) => void;
  licenseError: string | null;
}) {
  return (
    <div>
      <Show loaded={env.languages} label="languages">
        {(list) => (
          <SelectField
            label="Language"
            value={env.language}
            onValue={env.setLanguage}
            options={list.map((l) => [l.name, l.display_name] as const)}
          />
        )}
      </Show>
      <Show loaded={env.environments} label="environments">
        {(list) => {
          const chosen = list.find((x) => x.id === env.environment);
          return (
            <SelectField
              label="Environment"
              hint={
                chosen
                  ? `${chosen.description || chosen.display_name} · machine type ${chosen.machine_type}`
                  : 'This language has no environment on this cluster.'
              }
              value={env.environment}
              onValue={env.setEnvironment}
              options={list.map((e) => [e.id, `${e.display_name} (${e.machine_type})`] as const)}
            />
          );
        }}
      </Show>
      <SelectField
        label="License"
        error={licenseError}
        value={settings.license}
        onValue={(license) => update({ license })}
        options={LICENSES}
      />
      <RadioGroup
        legend="Source visibility"
        name="visibility"
        value={settings.visibility}
        onValue={(visibility) => update({ visibility })}
        options={[
          ['closed', 'Closed: only the owner and members read the source'],
          ['open', 'Open: callers may read the source'],
        ]}
      />
      <RadioGroup
        legend="Network access"
        name="network"
        value={settings.network}
        onValue={(network) => update({ network })}
        options={[
          ['isolated', "Isolated: only algohost's own API"],
          ['full', "Full: public internet hosts too, through the node's proxy (HTTP_PROXY)"],
        ]}
      />
      <Checkbox name="pipelines" checked={settings.pipelines} onValue={(pipelines) => update({ pipelines })}>
        Pipelines: may call other algorithms and hosted data as the caller
      </Checkbox>
    </div>
  );
}
