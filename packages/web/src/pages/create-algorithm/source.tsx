/**
 * Where a new algorithm's code lives: algohost's own Git server, or a new repository at an
 * external provider, which needs the user's authorization there.
 */
import { useEffect, useState } from 'preact/hooks';
import type { AlgohostClient, ScmConfig } from '@algohost/client';
import { SelectField, TextField } from '../../forms.js';
import { Link } from '../../router.js';
import { Show, useLoad } from '../../ui.js';
import { scmLabel } from '../account-scm.js';

/** The provider's repository naming rule as the API states it. */
export function repositoryProblem(name: string): string | null {
  if (!name) return 'A repository name is required.';
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(name)) return 'Letters, digits, "_", "." and "-" only, at most 100 characters.';
  if (/^\.+$/.test(name) || /\.git$/i.test(name)) return 'Not only dots, and not ending in ".git".';
  return null;
}

/** Rule 3, said where it matters: which configuration the user authorized. */
function unauthorizedText(config: ScmConfig): string {
  return `Token status unauthorized: algohost is not authorized at ${scmLabel(config)} for your account (you never authorized this configuration, revoked it, or the provider no longer accepts the token). Several configurations can point at the same provider: check under Account, Settings tab, Source Code Management that the one you authorized is ${scmLabel(config)} (id ${config.id}), and authorize it there.`;
}

export type SourceChoice = ReturnType<typeof useSourceChoice>;

/** The configuration chosen (the default one first) and, for an external one, the repository to create there. */
export function useSourceChoice(c: AlgohostClient, deps: unknown[]) {
  const scms = useLoad(async () => (await c.scms.list()).filter((x) => x.enabled), deps);
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
  return {
    scms,
    scm,
    setScm,
    external,
    token,
    repoOwners,
    repoOwner: repoOwnerShown,
    setRepoOwner,
    repoName,
    setRepoName,
    commitMessage,
    setCommitMessage,
  };
}

/** The Source section: one radio per configuration, then the repository fields or why they cannot be used. */
export function SourceFieldset({ source, name, repoError }: { source: SourceChoice; name: string; repoError: string | null }) {
  const { external } = source;
  return (
    <fieldset>
      <legend>Source</legend>
      <Show loaded={source.scms} label="the source-control configurations">
        {(list) => (
          <>
            {list.map((x) => (
              <label class="check" key={x.id}>
                <input type="radio" name="scm" value={x.id} checked={source.scm === x.id} onChange={() => source.setScm(x.id)} />
                {x.provider === 'internal' ? "This service: algohost's own Git server" : `A repository at ${scmLabel(x)}`}
              </label>
            ))}
          </>
        )}
      </Show>
      {external && (
        <Show loaded={source.token} label={`your authorization at ${scmLabel(external)}`}>
          {(status) =>
            status === null || source.token.loading ? (
              <p class="muted" aria-busy="true">
                Asking {external.name} about your authorization…
              </p>
            ) : status.authorization_status !== 'authorized' ? (
              <div class="notice" data-testid="scm-unauthorized">
                <p>{unauthorizedText(external)}</p>
                <p>
                  <Link href="/account/settings">Authorize it under Account, Settings</Link>
                </p>
              </div>
            ) : (
              <RepositoryFields source={source} config={external} scmUsername={status.scm_username} name={name} repoError={repoError} />
            )
          }
        </Show>
      )}
    </fieldset>
  );
}

function RepositoryFields({
  source,
  config,
  scmUsername,
  name,
  repoError,
}: {
  source: SourceChoice;
  config: ScmConfig;
  scmUsername: string;
  name: string;
  repoError: string | null;
}) {
  return (
    <div class="grid-2">
      <div>
        <SelectField
          label="Repository owner"
          hint={`Your account ${scmUsername} or an organization where you may create repositories.`}
          value={source.repoOwner}
          onValue={source.setRepoOwner}
          options={source.repoOwners.map((o) => [o, o] as const)}
        />
        <TextField
          label="Repository name"
          hint={`Created at ${config.name}; it must not exist there yet. Empty: the algorithm's name.`}
          error={repoError}
          value={source.repoName}
          placeholder={name}
          onValue={source.setRepoName}
          autoComplete="off"
          spellcheck={false}
        />
      </div>
      <div>
        <TextField
          label="Initial commit message"
          hint="The first commit, holding the environment's template code."
          value={source.commitMessage}
          placeholder={`Create ${name || 'the algorithm'} from the algohost template`}
          onValue={source.setCommitMessage}
        />
      </div>
    </div>
  );
}
