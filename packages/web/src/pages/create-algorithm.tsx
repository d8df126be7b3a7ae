import { useState } from 'preact/hooks';
import type { Algorithm, AlgorithmInput } from '@algohost/client';
import { Form, SelectField, SubmitActions, TextAreaField, TextField, useFields, useProblems } from '../forms.js';
import { useLocation } from '../router.js';
import { myOrganizations, type SignedIn } from '../session.js';
import { type Loaded, Show, useAction, useLoad, useTitle } from '../ui.js';
import { scmLabel } from './account-scm.js';
import { CreatedAtScm, CreatedHere } from './create-algorithm/created.js';
import { type EnvironmentChoice, RuntimeFields, type RuntimeSettings, useEnvironmentChoice } from './create-algorithm/runtime.js';
import { repositoryProblem, SourceFieldset, type SourceChoice, useSourceChoice } from './create-algorithm/source.js';

/** The API's naming rule (docs/compatibility.md §1), checked here so the form says it at once. */
export function nameProblem(name: string, max = 100): string | null {
  if (!name) return 'A name is required.';
  if (!/^[A-Za-z]/.test(name)) return 'The name must start with a letter.';
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) return 'Only letters, digits and underscores (no spaces: the label may have them).';
  if (name.length > max) return `At most ${max} characters.`;
  return null;
}

interface Draft extends RuntimeSettings {
  owner: string;
  name: string;
  label: string;
  summary: string;
}

/**
 * The form, then what was created. The draft lives here, not in the form, so that "Create
 * another" comes back to the same choices with only the name cleared.
 */
export function CreateAlgorithmPage({ session }: { session: SignedIn }) {
  useTitle('Create algorithm');
  const c = session.client;
  const { query } = useLocation();
  const owners = useLoad(async () => [session.me.username, ...myOrganizations(session)], [session]);
  const env = useEnvironmentChoice(c, [session]);
  const source = useSourceChoice(c, [session]);
  const draft = useFields<Draft>(() => ({
    owner: query.get('owner') ?? session.me.username,
    name: '',
    label: '',
    summary: '',
    license: 'apl',
    visibility: 'closed',
    network: 'isolated',
    pipelines: false,
  }));
  const problems = useProblems();
  const [created, setCreated] = useState<Algorithm | null>(null);
  const create = useAction(async () => setCreated(await createAlgorithm(session, draft.values, env, source)));

  if (created?.source) return <CreatedAtScm algorithm={created} source={created.source} />;
  if (created)
    return (
      <CreatedHere
        algorithm={created}
        username={session.me.username}
        onAnother={() => {
          setCreated(null);
          draft.set('name')('');
          problems.hide();
        }}
      />
    );

  const d = draft.values;
  const problem = nameProblem(d.name);
  const closedNeedsApl =
    d.visibility === 'closed' && d.license !== 'apl'
      ? 'Closed source needs the apl license; choose open source for another license.'
      : null;
  const repoProblem = source.external ? repositoryProblem(source.repoName || d.name) : null;
  return (
    <section>
      <h1>Create an algorithm</h1>
      <Form
        onSubmit={() => {
          problems.reveal();
          // An unauthorized configuration still submits: create asks the provider again and explains.
          if (!problem && !closedNeedsApl && !repoProblem && env.environment) void create.run();
        }}
      >
        <div class="grid-2">
          <IdentityFields owners={owners} draft={d} set={draft.set} nameError={problems.shown(problem)} onNameBlur={problems.reveal} />
          <RuntimeFields env={env} settings={d} update={draft.update} licenseError={problems.shown(closedNeedsApl)} />
        </div>
        <SourceFieldset source={source} name={d.name} repoError={problems.shown(repoProblem)} />
        <SubmitActions action={create}>Create algorithm</SubmitActions>
      </Form>
    </section>
  );
}

/** Who owns the algorithm and what it is called. */
function IdentityFields({
  owners,
  draft: d,
  set,
  nameError,
  onNameBlur,
}: {
  owners: Loaded<string[]>;
  draft: Draft;
  set: <K extends keyof Draft>(key: K) => (value: Draft[K]) => void;
  nameError: string | null;
  onNameBlur: () => void;
}) {
  return (
    <div>
      <Show loaded={owners} label="owners">
        {(list) => (
          <SelectField
            label="Owner"
            hint="You, or an organization you belong to."
            value={d.owner}
            onValue={set('owner')}
            options={(list.includes(d.owner) ? list : [...list, d.owner]).map((o) => [o, o] as const)}
          />
        )}
      </Show>
      <TextField
        label="Name"
        hint="Used in URLs and Git: letters, digits and underscores, starting with a letter."
        error={nameError}
        name="name"
        required
        value={d.name}
        onValue={set('name')}
        onBlur={onNameBlur}
        autoComplete="off"
        spellcheck={false}
      />
      <TextField label="Label" hint="The display name; spaces allowed." name="label" value={d.label} onValue={set('label')} />
      <TextAreaField label="Summary" name="summary" value={d.summary} onValue={set('summary')} />
    </div>
  );
}

/** Creates the algorithm, asking an external provider once more that the user's token still works there. */
async function createAlgorithm(session: SignedIn, d: Draft, env: EnvironmentChoice, source: SourceChoice): Promise<Algorithm> {
  const c = session.client;
  const { external } = source;
  let ownerAtProvider = source.repoOwner;
  if (external) {
    // Asked again now: the provider may have stopped accepting the token since the page loaded.
    const status = await c.scms.tokenStatus(external.id);
    if (status.authorization_status !== 'authorized') {
      source.token.reload();
      // The Source section above now explains it in full.
      throw new Error(`Nothing was created: ${scmLabel(external)} says algohost is not authorized for your account (see Source).`);
    }
    ownerAtProvider ||= status.scm_username;
  }
  return c.algorithms.create(d.owner, {
    name: d.name,
    details: { label: d.label || null, summary: d.summary || null },
    // The selects offer only values of the API's enums.
    settings: {
      algorithm_environment: env.environment,
      license: d.license,
      source_visibility: d.visibility,
      network_access: d.network,
      pipeline_enabled: d.pipelines,
    } as AlgorithmInput['settings'],
    ...(external
      ? {
          source: {
            scm: external.id,
            repository_owner: ownerAtProvider,
            repository_name: source.repoName || d.name,
            initial_commit_message: source.commitMessage.trim() || `Create ${d.name} from the algohost template`,
          },
        }
      : {}),
  });
}
