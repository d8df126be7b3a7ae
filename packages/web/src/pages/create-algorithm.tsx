import { useEffect, useState } from 'preact/hooks';
import type { Algorithm, AlgorithmInput, Environment, ScmConfig } from '@algohost/client';
import { cloneCommand, KEY_PLACEHOLDER } from '../git-help.js';
import { Link, useLocation } from '../router.js';
import { myOrganizations, type SignedIn } from '../session.js';
import { Busy, CopyBlock, ErrorText, Field, Show, useAction, useLoad, useTitle } from '../ui.js';
import { scmLabel } from './account-scm.js';

/** The API's naming rule (docs/compatibility.md §1), checked here so the form says it at once. */
export function nameProblem(name: string, max = 100): string | null {
  if (!name) return 'A name is required.';
  if (!/^[A-Za-z]/.test(name)) return 'The name must start with a letter.';
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) return 'Only letters, digits and underscores (no spaces: the label may have them).';
  if (name.length > max) return `At most ${max} characters.`;
  return null;
}

/** The provider's repository naming rule as the API states it. */
function repositoryProblem(name: string): string | null {
  if (!name) return 'A repository name is required.';
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(name)) return 'Letters, digits, "_", "." and "-" only, at most 100 characters.';
  if (/^\.+$/.test(name) || /\.git$/i.test(name)) return 'Not only dots, and not ending in ".git".';
  return null;
}

/** Rule 3, said where it matters: which configuration the user authorized. */
function unauthorizedText(config: ScmConfig): string {
  return `Token status unauthorized: algohost is not authorized at ${scmLabel(config)} for your account (you never authorized this configuration, revoked it, or the provider no longer accepts the token). Several configurations can point at the same provider: check under Account that the one you authorized is ${scmLabel(config)} (id ${config.id}), and authorize it there.`;
}

export const LICENSES: [string, string][] = [
  ['apl', 'Algorithmia Public License (apl)'],
  ['apache2', 'Apache 2.0'],
  ['gpl3', 'GPL 3'],
  ['mit', 'MIT'],
];

export function CreateAlgorithmPage({ session }: { session: SignedIn }) {
  useTitle('Create algorithm');
  const c = session.client;
  const { query } = useLocation();
  const owners = useLoad(async () => [session.me.username, ...myOrganizations(session)], [session]);
  const languages = useLoad(() => c.environments.languages(), [session]);

  const [owner, setOwner] = useState(query.get('owner') ?? session.me.username);
  const [name, setName] = useState('');
  const [touched, setTouched] = useState(false);
  const [label, setLabel] = useState('');
  const [summary, setSummary] = useState('');
  const [language, setLanguage] = useState('');
  const [environment, setEnvironment] = useState('');
  const [license, setLicense] = useState('apl');
  const [visibility, setVisibility] = useState('closed');
  const [network, setNetwork] = useState('isolated');
  const [pipelines, setPipelines] = useState(false);
  const [created, setCreated] = useState<Algorithm | null>(null);
  const scms = useLoad(async () => (await c.scms.list()).filter((x) => x.enabled), [session]);
  const [scm, setScm] = useState('');
  const [repoOwner, setRepoOwner] = useState('');
  const [repoName, setRepoName] = useState('');
  const [commitMessage, setCommitMessage] = useState('');
  useEffect(() => {
    if (!scm && scms.data?.length) setScm((scms.data.find((x) => x.default) ?? scms.data[0]!).id);
  }, [scms.data]);
  const external = scms.data?.find((x) => x.id === scm && x.provider !== 'internal');
  // Endpoint 1 for the chosen configuration: who the token acts as, and where it may create repositories.
  const token = useLoad(() => (external ? c.scms.tokenStatus(external.id) : Promise.resolve(null)), [external?.id]);
  const repoOwners =
    token.data?.authorization_status === 'authorized'
      ? [token.data.scm_username, ...token.data.scm_organizations.filter((o) => o.access_level === 'MEMBER').map((o) => o.scm_org_username)]
      : [];
  // The owner picked, or the first the token may create repositories for: derived on each
  // render, so the field never shows an empty choice while the token's answer settles.
  const repoOwnerShown = repoOwners.includes(repoOwner) ? repoOwner : (repoOwners[0] ?? '');

  useEffect(() => {
    if (!language && languages.data?.length) setLanguage(languages.data.find((l) => l.name === 'python3')?.name ?? languages.data[0]!.name);
  }, [languages.data]);
  const environments = useLoad<Environment[]>(() => (language ? c.environments.list(language) : Promise.resolve([])), [language]);
  useEffect(() => {
    const list = environments.data ?? [];
    if (!list.some((e) => e.id === environment)) setEnvironment(list[0]?.id ?? '');
  }, [environments.data]);

  const problem = nameProblem(name);
  const closedNeedsApl =
    visibility === 'closed' && license !== 'apl' ? 'Closed source needs the apl license; choose open source for another license.' : null;
  const repoProblem = external ? repositoryProblem(repoName || name) : null;
  const create = useAction(async () => {
    let ownerAtProvider = repoOwnerShown;
    if (external) {
      // Asked again now: the provider may have stopped accepting the token since the page loaded.
      const status = await c.scms.tokenStatus(external.id);
      if (status.authorization_status !== 'authorized') {
        token.reload();
        // The Source section above now explains it in full.
        throw new Error(`Nothing was created: ${scmLabel(external)} says algohost is not authorized for your account (see Source).`);
      }
      ownerAtProvider ||= status.scm_username;
    }
    const algorithm = await c.algorithms.create(owner, {
      name,
      details: { label: label || null, summary: summary || null },
      // The selects offer only values of the API's enums.
      settings: {
        algorithm_environment: environment,
        license,
        source_visibility: visibility,
        network_access: network,
        pipeline_enabled: pipelines,
      } as AlgorithmInput['settings'],
      ...(external
        ? {
            source: {
              scm: external.id,
              repository_owner: ownerAtProvider,
              repository_name: repoName || name,
              initial_commit_message: commitMessage.trim() || `Create ${name} from the algohost template`,
            },
          }
        : {}),
    });
    setCreated(algorithm);
  });

  if (created?.source) {
    const src = created.source;
    return (
      <section>
        <h1>
          {created.owner}/{created.name} is ready
        </h1>
        <p class="success" role="status">
          Its repository {src.repository_owner}/{src.repository_name} at {scmLabel(src.scm)} holds the environment's template code. Clone it
          from there, edit, and push: every push builds here.
        </p>
        <p>
          <a href={src.repository_web_url} rel="noreferrer">
            Open {src.repository_owner}/{src.repository_name} at {src.scm.name}
          </a>
        </p>
        <h2>Clone it</h2>
        <CopyBlock text={src.repository_https_url} label="HTTPS clone URL" />
        <CopyBlock text={src.repository_ssh_url} label="SSH clone URL" />
        <div class="actions">
          <Link class="button" href={`/algorithms/${created.owner}/${created.name}`}>
            Open the algorithm
          </Link>
        </div>
      </section>
    );
  }

  if (created) {
    const dir = created.name;
    return (
      <section>
        <h1>
          {created.owner}/{created.name} is ready
        </h1>
        <p class="success" role="status">
          The repository already holds the environment's template code. Clone it, edit, and push: every push builds.
        </p>
        <h2>Git URL</h2>
        <CopyBlock text={created.git_url} label="Git URL" />
        <h2>Clone it</h2>
        <CopyBlock text={cloneCommand(created.git_url, session.me.username, dir)} label="Clone command" copyLabel="Copy clone command" />
        <p class="hint">
          Replace <code>{KEY_PLACEHOLDER}</code> with an API key of yours that holds <code>manage_algorithms</code> (create one under{' '}
          <Link href="/account">Account</Link>); write a <code>/</code> in the key as <code>%2F</code>.
        </p>
        <div class="actions">
          <Link class="button" href={`/algorithms/${created.owner}/${created.name}`}>
            Open the algorithm
          </Link>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setCreated(null);
              setName('');
              setTouched(false);
            }}
          >
            Create another
          </button>
        </div>
      </section>
    );
  }

  return (
    <section>
      <h1>Create an algorithm</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setTouched(true);
          // An unauthorized configuration still submits: create asks the provider again and explains.
          if (!problem && !closedNeedsApl && !repoProblem && environment) void create.run();
        }}
      >
        <div class="grid-2">
          <div>
            <Show loaded={owners} label="owners">
              {(list) => (
                <Field label="Owner" hint="You, or an organization you belong to.">
                  {(p) => (
                    <select {...p} value={owner} onChange={(e) => setOwner(e.currentTarget.value)}>
                      {(list.includes(owner) ? list : [...list, owner]).map((o) => (
                        <option key={o} value={o}>
                          {o}
                        </option>
                      ))}
                    </select>
                  )}
                </Field>
              )}
            </Show>
            <Field
              label="Name"
              hint="Used in URLs and Git: letters, digits and underscores, starting with a letter."
              error={touched ? problem : null}
            >
              {(p) => (
                <input
                  {...p}
                  name="name"
                  required
                  value={name}
                  onInput={(e) => setName(e.currentTarget.value)}
                  onBlur={() => setTouched(true)}
                  autoComplete="off"
                  spellcheck={false}
                />
              )}
            </Field>
            <Field label="Label" hint="The display name; spaces allowed.">
              {(p) => <input {...p} name="label" value={label} onInput={(e) => setLabel(e.currentTarget.value)} />}
            </Field>
            <Field label="Summary">
              {(p) => <textarea {...p} name="summary" value={summary} onInput={(e) => setSummary(e.currentTarget.value)} />}
            </Field>
          </div>
          <div>
            <Show loaded={languages} label="languages">
              {(list) => (
                <Field label="Language">
                  {(p) => (
                    <select {...p} value={language} onChange={(e) => setLanguage(e.currentTarget.value)}>
                      {list.map((l) => (
                        <option key={l.name} value={l.name}>
                          {l.display_name}
                        </option>
                      ))}
                    </select>
                  )}
                </Field>
              )}
            </Show>
            <Show loaded={environments} label="environments">
              {(list) => (
                <Field
                  label="Environment"
                  hint={(() => {
                    const e = list.find((x) => x.id === environment);
                    return e
                      ? `${e.description || e.display_name} · machine type ${e.machine_type}`
                      : 'This language has no environment on this cluster.';
                  })()}
                >
                  {(p) => (
                    <select {...p} value={environment} onChange={(e) => setEnvironment(e.currentTarget.value)}>
                      {list.map((e) => (
                        <option key={e.id} value={e.id}>
                          {e.display_name} ({e.machine_type})
                        </option>
                      ))}
                    </select>
                  )}
                </Field>
              )}
            </Show>
            <Field label="License" error={touched ? closedNeedsApl : null}>
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
            <fieldset>
              <legend>Source visibility</legend>
              <label class="check">
                <input
                  type="radio"
                  name="visibility"
                  value="closed"
                  checked={visibility === 'closed'}
                  onChange={() => setVisibility('closed')}
                />
                Closed: only the owner and members read the source
              </label>
              <label class="check">
                <input type="radio" name="visibility" value="open" checked={visibility === 'open'} onChange={() => setVisibility('open')} />
                Open: callers may read the source
              </label>
            </fieldset>
            <fieldset>
              <legend>Network access</legend>
              <label class="check">
                <input
                  type="radio"
                  name="network"
                  value="isolated"
                  checked={network === 'isolated'}
                  onChange={() => setNetwork('isolated')}
                />
                Isolated: only algohost's own API
              </label>
              <label class="check">
                <input type="radio" name="network" value="full" checked={network === 'full'} onChange={() => setNetwork('full')} />
                Full: public internet hosts too, through the node's proxy (HTTP_PROXY)
              </label>
            </fieldset>
            <label class="check">
              <input type="checkbox" name="pipelines" checked={pipelines} onChange={(e) => setPipelines(e.currentTarget.checked)} />
              Pipelines: may call other algorithms and hosted data as the caller
            </label>
          </div>
        </div>
        <fieldset>
          <legend>Source</legend>
          <Show loaded={scms} label="the source-control configurations">
            {(list) => (
              <>
                {list.map((x) => (
                  <label class="check" key={x.id}>
                    <input type="radio" name="scm" value={x.id} checked={scm === x.id} onChange={() => setScm(x.id)} />
                    {x.provider === 'internal' ? "This service: algohost's own Git server" : `A repository at ${scmLabel(x)}`}
                  </label>
                ))}
              </>
            )}
          </Show>
          {external && (
            <Show loaded={token} label={`your authorization at ${scmLabel(external)}`}>
              {(status) =>
                status === null || token.loading ? (
                  <p class="muted" aria-busy="true">
                    Asking {external.name} about your authorization…
                  </p>
                ) : status.authorization_status !== 'authorized' ? (
                  <div class="notice" data-testid="scm-unauthorized">
                    <p>{unauthorizedText(external)}</p>
                    <p>
                      <Link href="/account">Authorize it under Account</Link>
                    </p>
                  </div>
                ) : (
                  <div class="grid-2">
                    <div>
                      <Field
                        label="Repository owner"
                        hint={`Your account ${status.scm_username} or an organization where you may create repositories.`}
                      >
                        {(p) => (
                          <select {...p} value={repoOwnerShown} onChange={(e) => setRepoOwner(e.currentTarget.value)}>
                            {repoOwners.map((o) => (
                              <option key={o} value={o}>
                                {o}
                              </option>
                            ))}
                          </select>
                        )}
                      </Field>
                      <Field
                        label="Repository name"
                        hint={`Created at ${external.name}; it must not exist there yet. Empty: the algorithm's name.`}
                        error={touched ? repoProblem : null}
                      >
                        {(p) => (
                          <input
                            {...p}
                            value={repoName}
                            placeholder={name}
                            onInput={(e) => setRepoName(e.currentTarget.value)}
                            autoComplete="off"
                            spellcheck={false}
                          />
                        )}
                      </Field>
                    </div>
                    <div>
                      <Field label="Initial commit message" hint="The first commit, holding the environment's template code.">
                        {(p) => (
                          <input
                            {...p}
                            value={commitMessage}
                            placeholder={`Create ${name || 'the algorithm'} from the algohost template`}
                            onInput={(e) => setCommitMessage(e.currentTarget.value)}
                          />
                        )}
                      </Field>
                    </div>
                  </div>
                )
              }
            </Show>
          )}
        </fieldset>
        <ErrorText error={create.error} />
        <div class="actions">
          <Busy type="submit" busy={create.busy}>
            Create algorithm
          </Busy>
        </div>
      </form>
    </section>
  );
}
