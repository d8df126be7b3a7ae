/** What the create-algorithm page shows once the algorithm exists: where its code is and how to clone it. */
import type { Algorithm } from '@algohost/client';
import { cloneCommand, KEY_PLACEHOLDER } from '../../git-help.js';
import { Link } from '../../router.js';
import { CopyBlock } from '../../ui.js';
import { scmLabel } from '../account-scm.js';

function OpenAlgorithm({ algorithm }: { algorithm: Algorithm }) {
  return (
    <Link class="button" href={`/algorithms/${algorithm.owner}/${algorithm.name}`}>
      Open the algorithm
    </Link>
  );
}

/** An algorithm whose repository was created at an external provider. */
export function CreatedAtScm({ algorithm, source: src }: { algorithm: Algorithm; source: NonNullable<Algorithm['source']> }) {
  return (
    <section>
      <h1>
        {algorithm.owner}/{algorithm.name} is ready
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
        <OpenAlgorithm algorithm={algorithm} />
      </div>
    </section>
  );
}

/** An algorithm whose repository is on algohost's own Git server. */
export function CreatedHere({ algorithm, username, onAnother }: { algorithm: Algorithm; username: string; onAnother: () => void }) {
  return (
    <section>
      <h1>
        {algorithm.owner}/{algorithm.name} is ready
      </h1>
      <p class="success" role="status">
        The repository already holds the environment's template code. Clone it, edit, and push: every push builds.
      </p>
      <h2>Git URL</h2>
      <CopyBlock text={algorithm.git_url} label="Git URL" />
      <h2>Clone it</h2>
      <CopyBlock text={cloneCommand(algorithm.git_url, username, algorithm.name)} label="Clone command" copyLabel="Copy clone command" />
      <p class="hint">
        Replace <code>{KEY_PLACEHOLDER}</code> with an API key of yours that holds <code>manage_algorithms</code> (create one under{' '}
        <Link href="/account">Account</Link>); write a <code>/</code> in the key as <code>%2F</code>.
      </p>
      <div class="actions">
        <OpenAlgorithm algorithm={algorithm} />
        <button type="button" class="secondary" onClick={onAnother}>
          Create another
        </button>
      </div>
    </section>
  );
}
