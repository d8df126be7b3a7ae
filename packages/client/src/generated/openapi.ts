/**
 * Generated from openapi.json by openapi-typescript (packages/client/scripts/generate-types.ts).
 * Do not edit: run `npm run generate -w @algohost/client`; `npm run check -w @algohost/client`
 * fails when this file is stale.
 */
export interface paths {
  '/v1/users': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List users, paged by name (admin key). */
    get: operations['user.list'];
    put?: never;
    /** Create a user (admin key). */
    post: operations['user.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/users/{account_name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Look up a user (docs/compatibility.md §9.2 endpoint 6; admin key). */
    get: operations['user.get'];
    /** Update a user (admin, or the user themself). Omitted fields are kept. */
    put: operations['user.update'];
    post?: never;
    /** Delete a user, its keys and its algorithms (admin key). */
    delete: operations['user.delete'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/users/{account_name}/keys': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List an account's keys (without secrets). */
    get: operations['key.list'];
    put?: never;
    /** Create an API key. The response holds the key itself; it is shown only this once. */
    post: operations['key.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/users/{account_name}/keys/{key_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Revoke a key. */
    delete: operations['key.revoke'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/auth/token': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Sign in with username and password; returns a short-lived JWT for Authorization: Bearer. */
    post: operations['session.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/auth/whoami': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Who the credential of this request belongs to, whether it acts as an admin, what it may do, and the organizations of the account (any credential; none for a call key). */
    get: operations['auth.whoami'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/organization/types': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Organization types; clients map type names to these ids. */
    get: operations['organization.types'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/organizations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List organizations (admin key). */
    get: operations['organization.list'];
    put?: never;
    /** Create an organization; the caller becomes its owner. */
    post: operations['organization.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/organizations/{org_name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get an organization (members and admins). */
    get: operations['organization.get'];
    /** Update an organization (owners and admins). Omitted fields are kept. */
    put: operations['organization.update'];
    post?: never;
    /** Delete an organization and its algorithms (owners and admins). */
    delete: operations['organization.delete'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/organizations/{org_name}/members': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List members with their roles. */
    get: operations['organization.members.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/organizations/{org_name}/members/{username}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /**
     * Invite a user, or change a member's role (owners and admins). The body may be empty; role defaults to member.
     * @description For a user who is not a member, an owner's request invites: 202 with the pending invitation, which the user accepts (POST /v1/users/{user}/invitations/{org}) or declines; asking again changes its role. A member's role changes at once (204). A cluster admin adds directly (204).
     */
    put: operations['organization.members.add'];
    post?: never;
    /** Remove a member (owners, admins, or the member leaving); 409 for the last owner. */
    delete: operations['organization.members.remove'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/organizations/{org_name}/invitations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Pending invitations (owners and admins). */
    get: operations['organization.invitations.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/organizations/{org_name}/invitations/{username}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Withdraw a pending invitation (owners and admins). */
    delete: operations['organization.invitations.withdraw'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/users/{account_name}/invitations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Invitations waiting for the user (the user and admins). */
    get: operations['user.invitations.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/users/{account_name}/invitations/{org_name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Accept an invitation and become a member with its role (the invited user only, with a session or a key holding every capability). */
    post: operations['user.invitations.accept'];
    /** Decline an invitation (the invited user, or an admin). */
    delete: operations['user.invitations.decline'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithm-environments/edge/languages': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List languages (docs/compatibility.md §9.2 endpoint 3). */
    get: operations['language.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithm-environments/edge/languages/{language_name}/environments': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the environments of a language (docs/compatibility.md §9.2 endpoint 4). */
    get: operations['environment.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithm-environments/edge/environment-specifications/{environment_specification_id}/template': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Download the template files as a gzipped tar (docs/compatibility.md §9.2 endpoint 5; no authentication). */
    get: operations['environment.template'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Explore: public algorithms of every owner, newest first, whose owner, name, label or summary contains the query (any credential). */
    get: operations['algorithm.search'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List an owner's algorithms, paged by name (private ones only for the owner and members). */
    get: operations['algorithm.list'];
    put?: never;
    /** Create an algorithm (docs/compatibility.md §9.2 endpoint 2). Its Git repository holds the template at once. */
    post: operations['algorithm.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get an algorithm. */
    get: operations['algorithm.get'];
    /** Update details and settings; omitted or empty fields are kept. */
    put: operations['algorithm.update'];
    post?: never;
    /** Delete an algorithm and its repository. */
    delete: operations['algorithm.delete'];
    options?: never;
    head?: never;
    /** Update details and settings; omitted or empty fields are kept. */
    patch: operations['algorithm.patch'];
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/source/commits': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The newest commits of the default branch, newest first (whoever may fetch the source over Git, and admins; an empty repository has none). */
    get: operations['algorithm.source.commits'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/source/readme': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The README at the root of a commit (README.md, README.markdown, README.txt or README, any letter case) as raw text, cut at 256 KiB; anyone who may read the algorithm. */
    get: operations['algorithm.source.readme'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/builds': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List builds, newest first (owner and members). */
    get: operations['build.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/builds/{build_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get a build. */
    get: operations['build.get'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/builds/{build_id}/logs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The log of a finished build (404 while it runs; follow it with .../logs/stream). */
    get: operations['build.logs'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/builds/{build_id}/logs/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Server-sent events: `log` events with output as it comes, then one `finished` event with the build. */
    get: operations['build.logs.stream'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/compile': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Build the head of the default branch again and wait for the outcome. */
    post: operations['algorithm.compile'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/versions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List versions, highest first (non-members see public versions only). */
    get: operations['version.list'];
    put?: never;
    /** Publish the latest successful build as the next version (1007 when it is already published or there is none). A retried identical request returns the same version. */
    post: operations['version.publish'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/version': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Publish the latest successful build as the next version (1007 when it is already published or there is none). A retried identical request returns the same version. */
    post: operations['version.publishSingular'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/versions/{git_hash}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A version by the commit it was built from (members also see builds not yet published). */
    get: operations['version.get'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Cluster health from the server's own data: version, database and blob store kinds, builds queued and running, warm runners, calls in the last minute, uptime (admins). */
    get: operations['admin.status'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/audit': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The audit log, newest first: account, key, organization and membership changes, algorithm settings, collection ACLs, event-cluster administration, sign-ins (admins). */
    get: operations['admin.audit.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/event-clusters': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the connected Kafka clusters (admin). */
    get: operations['eventCluster.list'];
    put?: never;
    /** Connect a Kafka cluster (admin). The service supplies no broker; several clusters may be connected. */
    post: operations['eventCluster.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/event-clusters/{cluster}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get a Kafka cluster connection (admin). */
    get: operations['eventCluster.get'];
    put?: never;
    post?: never;
    /** Disconnect a Kafka cluster and remove its assignments (admin). */
    delete: operations['eventCluster.delete'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/event-clusters/{cluster}/topics': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The topics of a connected cluster, as the cluster lists them now (admin); 503 when it cannot be reached. */
    get: operations['eventCluster.topics'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/event-clusters/{cluster}/assignments': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The algorithms assigned to topics of a cluster (admin). */
    get: operations['eventAssignment.list'];
    put?: never;
    /**
     * Assign an algorithm to a topic as publisher or subscriber (admin). Only published algorithms: an unpublished one is refused with 409 (code 8003), publish a version first. The flow starts disabled; its owner enables it and picks the version.
     * @description Subscribers: each record or message becomes a call of the chosen version as the algorithm’s owner, at least once (a delivery interrupted by a restart is delivered again); its topic, partition, offset and key (queues: message id) reach the algorithm as ALGOHOST_EVENT. Kafka: a failed call is retried with backoff, then written to <topic>.dlq with the error in header algohost-error. SQS: success deletes the message; failure or saturation returns it with a delay; the queue’s redrive policy dead-letters it after maxReceiveCount. Service Bus (peek-lock): success completes the message; failure or saturation abandons it after a delay; the queue’s max delivery count dead-letters it. Publishers: every successful call of the version sends its result to the topic with headers algohost-algorithm, algohost-version, algohost-request-id and content-type.
     */
    post: operations['eventAssignment.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/event-clusters/{cluster}/assignments/{flow_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Remove an assignment (admin); a running consumer stops. */
    delete: operations['eventAssignment.delete'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/event-flows': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The Event Flows of an algorithm with their consumers’ state and lag (owner and members).
     * @description Subscribers: each record or message becomes a call of the chosen version as the algorithm’s owner, at least once (a delivery interrupted by a restart is delivered again); its topic, partition, offset and key (queues: message id) reach the algorithm as ALGOHOST_EVENT. Kafka: a failed call is retried with backoff, then written to <topic>.dlq with the error in header algohost-error. SQS: success deletes the message; failure or saturation returns it with a delay; the queue’s redrive policy dead-letters it after maxReceiveCount. Service Bus (peek-lock): success completes the message; failure or saturation abandons it after a delay; the queue’s max delivery count dead-letters it. Publishers: every successful call of the version sends its result to the topic with headers algohost-algorithm, algohost-version, algohost-request-id and content-type.
     */
    get: operations['eventFlow.list'];
    put?: never;
    /**
     * Subscribe the algorithm to an SQS or Azure Service Bus queue (owner and members with manage_algorithms). It starts disabled.
     * @description Subscribers: each record or message becomes a call of the chosen version as the algorithm’s owner, at least once (a delivery interrupted by a restart is delivered again); its topic, partition, offset and key (queues: message id) reach the algorithm as ALGOHOST_EVENT. Kafka: a failed call is retried with backoff, then written to <topic>.dlq with the error in header algohost-error. SQS: success deletes the message; failure or saturation returns it with a delay; the queue’s redrive policy dead-letters it after maxReceiveCount. Service Bus (peek-lock): success completes the message; failure or saturation abandons it after a delay; the queue’s max delivery count dead-letters it. Publishers: every successful call of the version sends its result to the topic with headers algohost-algorithm, algohost-version, algohost-request-id and content-type.
     */
    post: operations['eventFlow.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/event-flows/{flow_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One Event Flow of an algorithm. */
    get: operations['eventFlow.get'];
    put?: never;
    post?: never;
    /** Remove a queue flow (Kafka assignments are removed by admins; their owners disable them). */
    delete: operations['eventFlow.delete'];
    options?: never;
    head?: never;
    /** Enable or disable a flow, pick its published version, set its timeout (owner and members with manage_algorithms). Enabling without a version picks the latest published one. */
    patch: operations['eventFlow.update'];
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/event-deliveries': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Deliveries of the algorithm’s flows, newest first: attempts, outcome, latency, dead-letter reason (owner and members). */
    get: operations['eventDelivery.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/users/{user_id}/sqs-assume-role': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** What the account’s SQS flows send when they assume an IAM role (the account itself, organization members and admins): the ExternalId to require in the role’s trust policy, the SourceIdentity, and a trust policy to paste. */
    get: operations['eventFlow.assumeRole'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/users/{user_id}/event-listeners': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The subscriber flows configured natively on the algorithms an account owns (spec endpoint 7): the account itself, organization members and admins may list them. Flows made from inside algorithm code are not listed; nothing lists a whole cluster. */
    get: operations['eventListener.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/scms': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** SCM configurations: the internal SCM always first, then the external ones (compat §6). */
    get: operations['scm.list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/scms/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One SCM configuration ("internal" or an external one). */
    get: operations['scm.get'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/scms': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create an external SCM configuration (admins): provider github|gitlab|bitbucket|gitea, urls.web, and the OAuth application registered there (its callback: {public URL}/v1/scms/oauth/callback). */
    post: operations['scm.create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/scms/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Delete an external SCM configuration that backs no algorithm (admins); its users' authorizations go with it. */
    delete: operations['scm.delete'];
    options?: never;
    head?: never;
    /** Enable or disable, make default, rename, change addresses or the OAuth client (admins); omitted fields are kept. */
    patch: operations['scm.update'];
    trace?: never;
  };
  '/v1/scms/{id}/token/status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Endpoint 1: whether the provider accepts this account's token for the configuration, as which provider account, and its organizations (asks the provider now). */
    post: operations['scm.tokenStatus'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/scms/{id}/authorize': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Start authorizing the configuration for the caller's account: answers the provider's consent address to send the browser to (and sets a cookie the callback needs). The provider sends the browser back to return_to (default /account) with scm, scm_status=authorized|error and scm_error in the query. */
    post: operations['scm.authorize'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/scms/oauth/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Where the provider sends the browser back (the OAuth redirect URI to register): stores the tokens and redirects to the page the flow started from. */
    get: operations['scm.oauthCallback'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/scms/{id}/token': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Revoke the caller's authorization of the configuration (at the provider too, where it has an endpoint for that). */
    delete: operations['scm.revoke'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/scm/sync': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Sync now: fetch the provider's main branch and build it if it holds a commit not built yet (for providers whose webhooks cannot reach this service); a fetch over the push, repository or account size limit is refused (409) and keeps nothing. */
    post: operations['scm.sync'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algorithms/{owner}/{name}/scm/status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** compat §3: active (the source is reachable), unauthorized (the token of the account that created it no longer works) or repository_missing; with the last webhook delivery. */
    get: operations['scm.connectionStatus'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/scm/webhooks/{algorithmId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Push webhooks from the provider of an externally hosted algorithm: signed with the secret algohost registered (unsigned and forged deliveries refused, a delivery id seen before refused); fetches the provider's main and builds its tip, never the commit a delivery names; a fetch over the push, repository or account size limit is refused (409) and keeps nothing. */
    post: operations['scm.webhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/admin/insights-connection': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Where Insights go (admin); 404 (code 8007) when no connection is configured. */
    get: operations['insightsConnection.get'];
    put?: never;
    /** Send Insights to a topic of a connected Kafka cluster (admin). Insights supports only one broker connection: a second is refused with 409 (code 8008) until the first is deleted. */
    post: operations['insightsConnection.create'];
    /** Stop sending Insights (admin; 404 when none is configured); reports are then refused with 503 until a connection is configured again. */
    delete: operations['insightsConnection.delete'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/insights': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Report metrics from inside a running call of a version with insights_enabled (the in-sandbox client does this): at most 25 metrics and 25 KB per report.
     * @description Sent with header X-Algohost-Insights-Token (the in-sandbox clients read it from ALGOHOST_INSIGHTS_TOKEN, set only while a call of an insights_enabled version runs); without a valid token 403 (code 8009). The report becomes one JSON record on the Insights topic: the metrics as keys, plus request_id, timestamp, duration_milliseconds, algorithm_owner, algorithm_name, algorithm_version (reserved: a report sending one is 400), key owner/name, headers algohost-algorithm, algohost-version, algohost-request-id and content-type. 202 once the broker has it; 503 when no Insights connection is configured or the broker cannot be reached.
     */
    post: operations['insights.report'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algo/{*}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Call an algorithm: /v1/algo/{owner}/{name}[/{version}] (version: x.y.z, x.y.*, latest, latestPrivate or a commit SHA). */
    post: operations['algorithm.call'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/algo/requests/{request_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Status of an async call (output=void) and, once completed, the envelope a sync call would have returned. */
    get: operations['algorithm.call.result'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/data/{*}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * A directory listing (JSON, X-Data-Type: directory) or a file's bytes (X-Data-Type: file, Content-Type following Accept). HEAD: 200 with X-Data-Type, or the status with X-Error-Message.
     * @description The path after /v1/data/: {owner}/{collection}/…, .my/…, .algo/{owner}/{algorithm}/temp|perm/…, .algo/temp|perm/… or .session/… (inside an algorithm). Names are percent-encoded UTF-8; "/" between names may also be sent as %2F (either case), so a name never holds "/". After one decoding, ".", "..", empty names, NUL and control characters, names over 255 bytes and paths over 1024 bytes are refused (400, code 6001).
     */
    get: operations['data.get'];
    /**
     * Store the body as the file (any Content-Type, streamed), replacing it atomically when it exists.
     * @description The path after /v1/data/: {owner}/{collection}/…, .my/…, .algo/{owner}/{algorithm}/temp|perm/…, .algo/temp|perm/… or .session/… (inside an algorithm). Names are percent-encoded UTF-8; "/" between names may also be sent as %2F (either case), so a name never holds "/". After one decoding, ".", "..", empty names, NUL and control characters, names over 255 bytes and paths over 1024 bytes are refused (400, code 6001).
     */
    put: operations['data.put'];
    /**
     * Create a folder in this directory; at an account's root a collection, with an optional read ACL (default ["algo://.my/*"]).
     * @description The path after /v1/data/: {owner}/{collection}/…, .my/…, .algo/{owner}/{algorithm}/temp|perm/…, .algo/temp|perm/… or .session/… (inside an algorithm). Names are percent-encoded UTF-8; "/" between names may also be sent as %2F (either case), so a name never holds "/". After one decoding, ".", "..", empty names, NUL and control characters, names over 255 bytes and paths over 1024 bytes are refused (400, code 6001).
     */
    post: operations['data.create'];
    /**
     * Delete a file, or a folder (?force=true when it is not empty); answers the number of files deleted.
     * @description The path after /v1/data/: {owner}/{collection}/…, .my/…, .algo/{owner}/{algorithm}/temp|perm/…, .algo/temp|perm/… or .session/… (inside an algorithm). Names are percent-encoded UTF-8; "/" between names may also be sent as %2F (either case), so a name never holds "/". After one decoding, ".", "..", empty names, NUL and control characters, names over 255 bytes and paths over 1024 bytes are refused (400, code 6001).
     */
    delete: operations['data.delete'];
    options?: never;
    head?: never;
    /**
     * Replace a collection's read ACL: [] private, ["algo://.my/*"] my algorithms, ["user://*"] public.
     * @description The path after /v1/data/: {owner}/{collection}/…, .my/…, .algo/{owner}/{algorithm}/temp|perm/…, .algo/temp|perm/… or .session/… (inside an algorithm). Names are percent-encoded UTF-8; "/" between names may also be sent as %2F (either case), so a name never holds "/". After one decoding, ".", "..", empty names, NUL and control characters, names over 255 bytes and paths over 1024 bytes are refused (400, code 6001).
     */
    patch: operations['data.update'];
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    /** @description Always content_type and duration; the rest when the call reached a runner. */
    CallMetadata: {
      content_type: 'json' | 'text' | 'binary' | 'void';
      /** @description Seconds the call took. */
      duration: number;
      /** @description What the algorithm printed (stdout=true; owner and members only). */
      stdout?: string;
      request_id?: string;
      /** @description The published version that ran (x.y.z). */
      algorithm_version?: string;
      /** @description Milliseconds waiting for a runner. */
      queue_ms?: number;
      /** @description Milliseconds starting one (a cold start). */
      start_ms?: number;
      /** @description Milliseconds the algorithm ran. */
      run_ms?: number;
      cold_start?: boolean;
    };
    /** @description An algorithm's failure, as its callers see it. */
    CallError: {
      message: string;
      /** @description AlgorithmError, InputError, TimeoutError, SystemExit, LoadingError… */
      error_type: string;
      /** @description Empty unless the caller may see the source. */
      stacktrace: string;
      /** @description The same as stacktrace (older clients read this name). */
      stack_trace: string;
    };
    /** @description A successful call. */
    CallResult: {
      /** @description The JSON value, the text, or base64 of the binary result. */
      result?: unknown;
      metadata: components['schemas']['CallMetadata'];
    };
    /** @description The algorithm failed (HTTP 200 all the same). */
    CallFailure: {
      error: components['schemas']['CallError'];
      metadata: components['schemas']['CallMetadata'];
    };
    /** @description An async call: running, then completed with the envelope a sync call would have answered. */
    AsyncCallStatus: {
      request_id: string;
      status: 'running' | 'completed';
      result?: unknown;
      error?: components['schemas']['CallError'];
      metadata?: components['schemas']['CallMetadata'];
    };
    /** @description Spec "SCM configuration". The OAuth client secret is never shown. */
    ScmConfig: {
      /** @description "internal", or the UUID of an external configuration. */
      id: string;
      /** @description The provider address (github.com, gitea.example.org…). */
      name: string;
      provider: 'internal' | 'github' | 'gitlab' | 'bitbucket' | 'gitea';
      /** @description What the web UI offers first; a create request without source.scm uses the internal SCM. */
      default: boolean;
      /** @description A disabled configuration backs no new algorithm and takes no new authorization. */
      enabled: boolean;
      scm?: {
        /** @description The OAuth client id of the application registered at the provider. */
        client_id: string;
      };
      oauth?: {
        /** @description The OAuth client id of the application registered at the provider. */
        client_id: string;
      };
      urls: {
        web: string;
        api: string;
        ssh?: string;
      };
    };
    /** @description Spec "SCM token status" (endpoint 1): the provider was asked, now. */
    ScmTokenStatus: {
      /** @description The provider account the stored token acts as (the last one seen when unauthorized; empty if never authorized). */
      scm_username: string;
      authorization_status: 'authorized' | 'unauthorized';
      scm_organizations: {
        scm_org_username: string;
        /** @description MEMBER: a member who may create repositories there (a valid repository_owner); READ: a member who may not. */
        access_level: 'MEMBER' | 'READ';
      }[];
    };
    ScmDelivery: {
      at: string;
      via: 'webhook' | 'sync';
      commit_sha: string | null;
      /** @description What came of it: the build queued, "up to date", or why nothing was built. */
      result: string;
    };
    /** @description Spec "Source": where an externally hosted algorithm keeps its source. */
    AlgorithmSource: {
      repository_name: string;
      repository_owner: string;
      scm: components['schemas']['ScmConfig'];
      repository_https_url: string;
      repository_ssh_url: string;
      repository_web_url: string;
      last_delivery?: components['schemas']['ScmDelivery'];
    };
    /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
    Error: {
      error: {
        code: number;
        message: string;
      };
    };
    /** @description Every field is always present (docs/compatibility.md §9.5). */
    User: {
      /** Format: uuid */
      id: string;
      username: string;
      /** @description The e-mail address; "" when none was given. */
      email: string;
      /** @description "" when none was given. */
      fullname: string;
      /** @description "" when none was given. */
      company_name: string;
      /** @description "" when none was given. */
      company_role: string;
      self_link: string;
      /** @enum {string} */
      resource_type: 'user';
    };
    Organization: {
      /** Format: uuid */
      id: string;
      org_name: string;
      org_label: string;
      org_contact_name?: string;
      org_email?: string;
      org_url?: string;
      type_id: string;
      self_link: string;
      /** @enum {string} */
      resource_type: 'organization';
    };
    /** @description A pending invitation to an organization: the user becomes a member only by accepting it. */
    Invitation: {
      org_name: string;
      username: string;
      role: 'owner' | 'member';
      /** @description The owner (or organization) who invited; null once deleted. */
      invited_by: string | null;
      created_at: string;
    };
    ApiKey: {
      /** Format: uuid */
      id: string;
      kind: 'standard' | 'admin';
      capabilities: ('manage_algorithms' | 'call_algorithms' | 'read_data' | 'write_data')[];
      /** @description The first characters of the key, to recognise it. */
      prefix: string;
      description?: string;
      created_at: string;
    };
    Language: {
      name: string;
      display_name: string;
      /** @description JSON document: {display_name, req_files, artifacts}. */
      configuration: string;
    };
    Environment: {
      /**
       * Format: uuid
       * @description Unique per cluster; use as settings.algorithm_environment.
       */
      id: string;
      name: string;
      /**
       * Format: uuid
       * @description Names the template (endpoint 5).
       */
      environment_specification_id: string;
      display_name: string;
      description: string;
      /** @description ISO 8601 with fractional seconds, no zone designator. */
      created_at: string;
      language: components['schemas']['Language'];
      machine_type: 'CPU' | 'GPU';
      runtime: {
        name: string;
        version: string;
      };
    };
    VersionInfo: {
      /** @description major.minor.patch; absent for a build not yet published. */
      semantic_version?: string;
      git_hash: string;
      version_uuid?: string;
      release_notes?: string;
      sample_input?: string;
      sample_output?: string;
      published_at?: string;
    };
    Algorithm: {
      /** Format: uuid */
      id: string;
      name: string;
      owner: string;
      details: {
        label?: string;
        summary?: string;
        tagline?: string;
      };
      settings: {
        algorithm_callability: string;
        source_visibility: string;
        language?: string;
        environment?: string;
        package_set?: string;
        /** Format: uuid */
        algorithm_environment: string;
        license: string;
        royalty_microcredits: number;
        network_access: string;
        pipeline_enabled: boolean;
        insights_enabled: boolean;
      };
      version_info?: components['schemas']['VersionInfo'];
      build?: components['schemas']['Build'];
      source?: components['schemas']['AlgorithmSource'];
      /** @description Clone address of the algorithm repository (push address too, unless `source` says the source lives at an external SCM). */
      git_url: string;
      created_at: string;
      updated_at: string;
      self_link: string;
      /** @enum {string} */
      resource_type: 'algorithm';
    };
    Build: {
      /** Format: uuid */
      build_id: string;
      commit_sha: string;
      status: 'queued' | 'in-progress' | 'succeeded' | 'failed';
      /** @description push: a push to the repository (algohost’s Git server, or an external provider’s webhook); sync: fetched by “sync now” (POST …/scm/sync); compile: POST …/compile. */
      trigger: 'push' | 'sync' | 'compile';
      environment: string;
      /** @description Why a failed build failed; the log has the details. */
      error?: string;
      created_at: string;
      started_at: string | null;
      finished_at: string | null;
      /** @enum {string} */
      resource_type: 'build';
    };
    Identity: {
      username: string;
      /** @description Whether the caller acts as a cluster admin (an admin key, or a session of an admin account). */
      admin: boolean;
      /** @description How the caller proved who it is: a signed-in session, a standard API key, the key of an algorithm call, an admin key. */
      credential: 'session' | 'key' | 'call_key' | 'admin_key';
      /** @description What the credential may do (docs/api-guide.md, "Credentials and capabilities"). */
      capabilities: ('manage_algorithms' | 'call_algorithms' | 'read_data' | 'write_data')[];
      /** @description The organizations the account belongs to, by name; absent for a call key. */
      organizations?: {
        name: string;
        role: 'owner' | 'member';
      }[];
      /** @description The account's own profile; absent for a call key. */
      email?: string | null;
      fullname?: string | null;
      company_name?: string | null;
      company_role?: string | null;
    };
    Commit: {
      sha: string;
      /** @description Cut to 200 columns (ending in ".."). */
      author_name: string;
      /** @description The subject: the message's first line, cut to 500 columns (ending in ".."). */
      message: string;
      /** @description ISO 8601, UTC. */
      committed_at: string;
    };
    Readme: {
      /** @description The commit the README was read from. */
      commit: string;
      /** @description Its name at the root of the tree, as spelled there (README.md, readme.txt…). */
      path: string;
      /** @description The raw text (Markdown or plain); whoever shows it must render it safely. */
      content: string;
      /** @description Present (true) when the file is longer than 256 KiB: content holds its first 256 KiB. */
      truncated?: boolean;
    };
    ClusterStatus: {
      /** @description The server's release. */
      version: string;
      database: 'sqlite' | 'postgresql';
      blob_store: 'disk' | 's3';
      /** @description In the whole cluster. */
      builds: {
        queued: number;
        running: number;
      };
      /** @description Started runners of this node, idle or busy. */
      runners: {
        warm: number;
      };
      /** @description Calls this node handed to a runner in the last 60 seconds. */
      calls_per_minute: number;
      /** @description Since this node started. */
      uptime_seconds: number;
    };
    KafkaCluster: {
      id: string;
      name: string;
      bootstrap_servers: string[];
      tls: boolean;
      /** @description Whether extra CA certificates are trusted (the PEM is not returned). */
      tls_ca_set: boolean;
      sasl: {
        mechanism: string;
        username: string;
      } | null;
      created_at: string;
    };
    EventFlow: {
      id: string;
      /** @description owner/name */
      algorithm: string;
      source_type: 'kafka' | 'sqs' | 'servicebus';
      role: 'publisher' | 'subscriber';
      cluster: {
        id: string;
        name: string;
      } | null;
      topic: string | null;
      dead_letter_topic: string | null;
      source_uri: string | null;
      credentials: {
        kind: 'role' | 'static';
        /** @description The role ARN, or the access key id (SQS); the shared access key name (Service Bus). */
        id: string;
        /** @description SQS roles: the ExternalId every AssumeRole of this flow carries, the algorithm owner’s (GET /v1/users/{user_id}/sqs-assume-role gives it before a flow exists). The role’s trust policy must require it: "Condition": {"StringEquals": {"sts:ExternalId": "<this value>"}}. */
        external_id?: string;
        /** @description SQS roles: the SourceIdentity the role’s sessions carry (algohost-<owner>); its trust policy must allow sts:SetSourceIdentity. */
        source_identity?: string;
      } | null;
      timeout: number | null;
      enabled: boolean;
      version: string | null;
      /** @description What the nodes running the flow report (a publisher: failed while the cluster refuses its records). A subscriber no node runs has state stopped (disabled, or no version) or starting (enabled, not picked up yet) with its lag measured in the broker; a publisher no node sends for has null. */
      status: {
        /** @description paused: the algorithm is saturated (all its runners busy); records wait in the broker. stopped: a subscriber that is disabled (or has no version), so no node consumes it; starting: enabled, and no node has started consuming it yet. */
        state: 'starting' | 'running' | 'paused' | 'failed' | 'stopped';
        lag: number | null;
        error: string | null;
      } | null;
      created_at: string;
      updated_at: string;
    };
    EventDelivery: {
      id: string;
      flow_id: string;
      /** @description topic/partition@offset (Kafka) or the message id (SQS). */
      source: string;
      /** @description Calls made (Kafka) or the receive count (SQS). */
      attempts: number;
      /** @description failed: the call failed and the message goes back to its queue (SQS); returned: the algorithm was saturated and the message went back with a delay; dead_lettered: written to the dead-letter topic, or moved to the queue’s dead-letter queue. */
      outcome: 'succeeded' | 'failed' | 'dead_lettered' | 'returned';
      error: string | null;
      dead_letter: string | null;
      request_id: string | null;
      latency_ms: number;
      created_at: string;
    };
    EventListener: {
      id: string;
      /** @description SQS, SERVICEBUS or KAFKA. */
      sourceType: string;
      /** @description The queue URL or URI, or kafka://<bootstrap servers>/<topic>. */
      sourceURI: string;
      algoName: string;
      algoOwner: string;
      /** @description The account that configured the flow. */
      listenerOwner: string;
      /** @description The role ARN or access key id (SQS); the shared access key name (Service Bus); cluster:<name> (Kafka). Never a secret. */
      credentials: string;
    };
    SqsAssumeRole: {
      /** @description The account (user or organization) whose algorithms’ SQS flows assume roles so. */
      account: string;
      /** @description Sent as ExternalId with every AssumeRole of the account’s SQS flows; derived from the cluster key and the account, the same on every node, never another account’s. */
      external_id: string;
      /** @description Sent as SourceIdentity: algohost-<account>, recorded by CloudTrail. */
      source_identity: string;
      /** @description A trust policy to put on the role: the algohost nodes’ principal (ask the operator) may assume it with this ExternalId only. */
      trust_policy: {
        [key: string]: unknown;
      };
    };
    AuditEntry: {
      id: string;
      /** @description When, ISO 8601. */
      at: string;
      /** @description The account that acted (for a sign-in, the account whose name was tried, by its own name); null if none (a sign-in for a name no account has: see details.name_hash). */
      actor: string | null;
      /** @description admin_key, key, session, call_key, or password (a sign-in). */
      credential: string | null;
      /** @description The operation id (key.create, organization.members.add…). */
      action: string;
      /** @description The request path. */
      target: string;
      /** @description The HTTP status it was answered (2xx, 403, or a sign-in’s 401/429). */
      status: number;
      /** @description The client address. */
      address: string | null;
      /** @description The request body without secrets (`body`) and the id of what it made (`id`). A sign-in: a keyed hash of a name no account has (`name_hash`, never the name), how many attempts a failed entry aggregates (`attempts`, one entry per name, client and outcome per 10 minutes; `rest_of_window` for those past the per-account cap), and whose sandbox it came from (`sandbox`). */
      details: {
        [key: string]: unknown;
      };
    };
    DataFolder: {
      name: string;
    };
    DataFile: {
      filename: string;
      size: number;
      /** @description YYYY-MM-DDTHH:MM:SS.mmmZ */
      last_modified: string;
    };
    /** @description Who may read a collection: [] private, ["algo://.my/*"] its owner's algorithms, ["user://*"] anyone. */
    DataAcl: {
      read: string[];
    };
    /** @description A directory (X-Data-Type: directory). Folders come before files, never on the same page; empty arrays are omitted. */
    DataDirectory: {
      folders?: components['schemas']['DataFolder'][];
      files?: components['schemas']['DataFile'][];
      /** @description Pass as ?marker= for the next page; absent on the last page. */
      marker?: string;
      acl?: components['schemas']['DataAcl'];
    };
    DataDeleteResult: {
      result: {
        /** @description How many files were deleted. */
        deleted: number;
      };
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  'user.list': {
    parameters: {
      query?: {
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['User'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'user.create': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @description must start with a letter and contain only letters, digits and underscores; unique regardless of case */
          username: string;
          /** @description Unique. */
          email: string;
          fullname?: string | null;
          company_name?: string | null;
          company_role?: string | null;
          /** @description At least 8 characters. */
          password?: string;
        };
      };
    };
    responses: {
      /** @description Every field is always present (docs/compatibility.md §9.5). */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['User'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'user.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Every field is always present (docs/compatibility.md §9.5). */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['User'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'user.update': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
      };
      cookie?: never;
    };
    /** @description Omitted or null fields are kept. A username may be sent only as the current one: names never change. */
    requestBody: {
      content: {
        'application/json': {
          email?: string | null;
          fullname?: string | null;
          company_name?: string | null;
          company_role?: string | null;
          /** @description At least 8 characters. */
          password?: string;
          /** @description Needed with password (403 without it or when wrong), except when an admin sets another account's password. */
          current_password?: string;
        };
      };
    };
    responses: {
      /** @description Every field is always present (docs/compatibility.md §9.5). */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['User'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'user.delete': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'key.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: components['schemas']['ApiKey'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'key.create': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          kind?: 'standard' | 'admin';
          /** @description Default: all of manage_algorithms, call_algorithms, read_data, write_data; never more than the caller holds (403). */
          capabilities?: ('manage_algorithms' | 'call_algorithms' | 'read_data' | 'write_data')[];
          description?: string | null;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            kind: 'standard' | 'admin';
            capabilities: ('manage_algorithms' | 'call_algorithms' | 'read_data' | 'write_data')[];
            /** @description The first characters of the key, to recognise it. */
            prefix: string;
            description?: string;
            created_at: string;
            /** @description The secret (sim + 25 characters); shown only in this response. */
            key: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'key.revoke': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
        key_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'session.create': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          username: string;
          password: string;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            token: string;
            /** @enum {string} */
            token_type: 'Bearer';
            expires_at: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'auth.whoami': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Identity'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.types': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            id: string;
            name: string;
          }[];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.list': {
    parameters: {
      query?: {
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['Organization'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.create': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @description A letter, then letters, digits and underscores; unique among users and organizations. */
          org_name: string;
          org_label?: string | null;
          org_contact_name?: string | null;
          org_email?: string | null;
          org_url?: string | null;
          /** @description An id or a name from GET /v1/organization/types (default basic). */
          type_id?:
            | ('7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a01' | '7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a02' | '7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a03')
            | ('basic' | 'legacy' | 'pro')
            | null;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Organization'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Organization'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.update': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
      };
      cookie?: never;
    };
    /** @description Omitted or null fields are kept. An org_name may be sent only as the current one: names never change. */
    requestBody: {
      content: {
        'application/json': {
          org_label?: string | null;
          org_contact_name?: string | null;
          org_email?: string | null;
          org_url?: string | null;
          /** @description An id or a name from GET /v1/organization/types (default basic). */
          type_id?:
            | ('7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a01' | '7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a02' | '7b1a5b02-8c2e-4f34-9a5e-1c7d0d5b6a03')
            | ('basic' | 'legacy' | 'pro')
            | null;
        };
      };
    };
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.delete': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.members.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            username: string;
            role: 'owner' | 'member';
          }[];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.members.add': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
        username: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          role?: 'owner' | 'member';
        } | null;
      };
    };
    responses: {
      /** @description A pending invitation to an organization: the user becomes a member only by accepting it. */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Invitation'];
        };
      };
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.members.remove': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
        username: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.invitations.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Invitation'][];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'organization.invitations.withdraw': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        org_name: string;
        username: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'user.invitations.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Invitation'][];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'user.invitations.accept': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
        org_name: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': Record<string, never> | null;
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            org_name: string;
            username: string;
            role: 'owner' | 'member';
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'user.invitations.decline': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        account_name: string;
        org_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'language.list': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Language'][];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'environment.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        language_name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Environment'][];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'environment.template': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        environment_specification_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A gzipped tar archive of the template files. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/gzip': string;
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.search': {
    parameters: {
      query?: {
        /** @description Text to find in the owner, name, label or summary, ignoring case (at most 100 characters); empty: every public algorithm. */
        query?: string;
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['Algorithm'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.list': {
    parameters: {
      query?: {
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
      };
      header?: never;
      path: {
        owner: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['Algorithm'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.create': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
      };
      cookie?: never;
    };
    /** @description settings.username, when sent (the Python client does), must name the owner in the path. */
    requestBody: {
      content: {
        'application/json': {
          /** @description As used in URLs (not the display label); unique per owner regardless of case. */
          name: string;
          details?: {
            label?: string | null;
            summary?: string | null;
            tagline?: string | null;
          } | null;
          settings?: {
            /**
             * @description New algorithms are private.
             * @enum {unknown}
             */
            algorithm_callability?: 'private' | 'public' | null;
            /**
             * @description closed needs license apl (409 on an update that would break that).
             * @enum {unknown}
             */
            source_visibility?: 'open' | 'closed' | null;
            /** @enum {unknown} */
            license?: 'apl' | 'apache2' | 'gpl3' | 'mit' | null;
            /**
             * @description isolated: no network. full: outbound to public internet addresses only, through the node's egress proxy (HTTP_PROXY/HTTPS_PROXY inside); loopback, private, link-local and metadata addresses and the node's own services are refused.
             * @enum {unknown}
             */
            network_access?: 'isolated' | 'full' | null;
            pipeline_enabled?: boolean | null;
            insights_enabled?: boolean | null;
            royalty_microcredits?: number | null;
            algorithm_environment?: string | null;
            language?: string | null;
            /**
             * @description Legacy form: the hardware class, with language.
             * @enum {unknown}
             */
            environment?: 'cpu' | 'gpu' | null;
          } | null;
          source?: {
            /** @description "internal" (the default), or the id of an enabled SCM configuration this account authorized (GET /v1/scms). */
            scm?: string | null;
            /** @description With an external scm: the repository to create at the provider (it must not exist there yet). */
            repository_name?: string | null;
            /** @description With an external scm: scm_username of the token status, or an organization where it is MEMBER. */
            repository_owner?: string | null;
            /** @description With an external scm: the message of the first commit (the environment's template). */
            initial_commit_message?: string | null;
          } | null;
          version_info?: {
            [key: string]: unknown;
          } | null;
          scmsCredentials?: unknown;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Algorithm'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Algorithm'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.update': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    /** @description Omitted or empty parts are kept (the Python client sends every part, empty when unset). A name may be sent only as the current one: algorithms are never renamed. */
    requestBody: {
      content: {
        'application/json': {
          details?: {
            label?: string | null;
            summary?: string | null;
            tagline?: string | null;
          } | null;
          settings?: {
            /**
             * @description New algorithms are private.
             * @enum {unknown}
             */
            algorithm_callability?: 'private' | 'public' | null;
            /**
             * @description closed needs license apl (409 on an update that would break that).
             * @enum {unknown}
             */
            source_visibility?: 'open' | 'closed' | null;
            /** @enum {unknown} */
            license?: 'apl' | 'apache2' | 'gpl3' | 'mit' | null;
            /**
             * @description isolated: no network. full: outbound to public internet addresses only, through the node's egress proxy (HTTP_PROXY/HTTPS_PROXY inside); loopback, private, link-local and metadata addresses and the node's own services are refused.
             * @enum {unknown}
             */
            network_access?: 'isolated' | 'full' | null;
            pipeline_enabled?: boolean | null;
            insights_enabled?: boolean | null;
            royalty_microcredits?: number | null;
            algorithm_environment?: string | null;
            language?: string | null;
            /**
             * @description Legacy form: the hardware class, with language.
             * @enum {unknown}
             */
            environment?: 'cpu' | 'gpu' | null;
          } | null;
          source?: {
            [key: string]: unknown;
          } | null;
          version_info?: {
            [key: string]: unknown;
          } | null;
          scmsCredentials?: unknown;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Algorithm'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.delete': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.patch': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    /** @description Omitted or empty parts are kept (the Python client sends every part, empty when unset). A name may be sent only as the current one: algorithms are never renamed. */
    requestBody: {
      content: {
        'application/json': {
          details?: {
            label?: string | null;
            summary?: string | null;
            tagline?: string | null;
          } | null;
          settings?: {
            /**
             * @description New algorithms are private.
             * @enum {unknown}
             */
            algorithm_callability?: 'private' | 'public' | null;
            /**
             * @description closed needs license apl (409 on an update that would break that).
             * @enum {unknown}
             */
            source_visibility?: 'open' | 'closed' | null;
            /** @enum {unknown} */
            license?: 'apl' | 'apache2' | 'gpl3' | 'mit' | null;
            /**
             * @description isolated: no network. full: outbound to public internet addresses only, through the node's egress proxy (HTTP_PROXY/HTTPS_PROXY inside); loopback, private, link-local and metadata addresses and the node's own services are refused.
             * @enum {unknown}
             */
            network_access?: 'isolated' | 'full' | null;
            pipeline_enabled?: boolean | null;
            insights_enabled?: boolean | null;
            royalty_microcredits?: number | null;
            algorithm_environment?: string | null;
            language?: string | null;
            /**
             * @description Legacy form: the hardware class, with language.
             * @enum {unknown}
             */
            environment?: 'cpu' | 'gpu' | null;
          } | null;
          source?: {
            [key: string]: unknown;
          } | null;
          version_info?: {
            [key: string]: unknown;
          } | null;
          scmsCredentials?: unknown;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Algorithm'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.source.commits': {
    parameters: {
      query?: {
        /** @description How many commits, 1–100 (default 20); 5003 otherwise. */
        limit?: string;
      };
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: components['schemas']['Commit'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.source.readme': {
    parameters: {
      query?: {
        /** @description A commit SHA, or a branch or tag name (v1.2.3); default: the default branch. A name no ref can have is 404. */
        ref?: string;
      };
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Readme'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'build.list': {
    parameters: {
      query?: {
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
      };
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['Build'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'build.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
        build_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Build'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'build.logs': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
        build_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            logs: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'build.logs.stream': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
        build_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description text/event-stream: `log` events ({"text"}), then one `finished` event (the build). */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': {
            /** @enum {unknown} */
            event: 'log' | 'finished';
            data: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.compile': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          [key: string]: unknown;
        } | null;
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            name: string;
            owner: string;
            details: {
              label?: string;
              summary?: string;
              tagline?: string;
            };
            settings: {
              algorithm_callability: string;
              source_visibility: string;
              language?: string;
              environment?: string;
              package_set?: string;
              /** Format: uuid */
              algorithm_environment: string;
              license: string;
              royalty_microcredits: number;
              network_access: string;
              pipeline_enabled: boolean;
              insights_enabled: boolean;
            };
            version_info: {
              git_hash: string;
            };
            build: components['schemas']['Build'];
            source?: components['schemas']['AlgorithmSource'];
            /** @description Clone address of the algorithm repository (push address too, unless `source` says the source lives at an external SCM). */
            git_url: string;
            created_at: string;
            updated_at: string;
            self_link: string;
            /** @enum {string} */
            resource_type: 'algorithm';
            compilation: {
              successful: boolean;
              /** @description The build log. */
              output: string;
            };
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'version.list': {
    parameters: {
      query?: {
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
        /** @description true (default): published versions; false: successful builds not yet published. */
        published?: string;
        /** @description true: public versions; false: private ones. */
        callable?: string;
      };
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['Algorithm'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'version.publish': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          details?: {
            [key: string]: unknown;
          } | null;
          settings?: {
            /**
             * @description Default: the algorithm's.
             * @enum {unknown}
             */
            algorithm_callability?: 'private' | 'public' | null;
            insights_enabled?: boolean | null;
          } | null;
          version_info?: {
            /**
             * @description Default minor; revision is patch.
             * @enum {unknown}
             */
            version_type?: 'major' | 'minor' | 'revision' | 'patch' | '' | null;
            /**
             * @description The same as version_type (one client sends this name).
             * @enum {unknown}
             */
            type?: 'major' | 'minor' | 'revision' | 'patch' | '' | null;
            release_notes?: string | null;
            /** @description Text, or a JSON value kept as its JSON text; at most 65536 characters. */
            sample_input?:
              | string
              | number
              | boolean
              | null
              | unknown[]
              | {
                  [key: string]: unknown;
                };
            /** @description As sample_input. */
            sample_output?:
              | string
              | number
              | boolean
              | null
              | unknown[]
              | {
                  [key: string]: unknown;
                };
          } | null;
        } | null;
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Algorithm'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'version.publishSingular': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          details?: {
            [key: string]: unknown;
          } | null;
          settings?: {
            /**
             * @description Default: the algorithm's.
             * @enum {unknown}
             */
            algorithm_callability?: 'private' | 'public' | null;
            insights_enabled?: boolean | null;
          } | null;
          version_info?: {
            /**
             * @description Default minor; revision is patch.
             * @enum {unknown}
             */
            version_type?: 'major' | 'minor' | 'revision' | 'patch' | '' | null;
            /**
             * @description The same as version_type (one client sends this name).
             * @enum {unknown}
             */
            type?: 'major' | 'minor' | 'revision' | 'patch' | '' | null;
            release_notes?: string | null;
            /** @description Text, or a JSON value kept as its JSON text; at most 65536 characters. */
            sample_input?:
              | string
              | number
              | boolean
              | null
              | unknown[]
              | {
                  [key: string]: unknown;
                };
            /** @description As sample_input. */
            sample_output?:
              | string
              | number
              | boolean
              | null
              | unknown[]
              | {
                  [key: string]: unknown;
                };
          } | null;
        } | null;
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Algorithm'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'version.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
        git_hash: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Algorithm'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'admin.status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ClusterStatus'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'admin.audit.list': {
    parameters: {
      query?: {
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
        /** @description Only this account’s actions. */
        actor?: string;
        /** @description An operation id, or a dotted prefix of them (`key`). */
        action?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['AuditEntry'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventCluster.list': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: components['schemas']['KafkaCluster'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventCluster.create': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          name: string;
          /** @description host:port of one or more brokers. */
          bootstrap_servers: string[];
          tls?: boolean;
          /** @description PEM certificates to trust besides the system’s. */
          tls_ca?: string;
          sasl?: {
            mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
            username: string;
            /** @description Encrypted at rest with the cluster key; never returned. */
            password: string;
          };
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['KafkaCluster'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventCluster.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The connection id or name. */
        cluster: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['KafkaCluster'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventCluster.delete': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The connection id or name. */
        cluster: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventCluster.topics': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The connection id or name. */
        cluster: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: {
              name: string;
              partitions: number;
            }[];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventAssignment.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The connection id or name. */
        cluster: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: components['schemas']['EventFlow'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventAssignment.create': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The connection id or name. */
        cluster: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @description owner/name */
          algorithm: string;
          topic: string;
          role: 'publisher' | 'subscriber';
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventFlow'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventAssignment.delete': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        cluster: string;
        flow_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventFlow.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: components['schemas']['EventFlow'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventFlow.create': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json':
          | {
              /** @enum {string} */
              source_type: 'sqs';
              /** @description The queue URL; a host other than AWS SQS only when ALGOHOST_SQS_ENDPOINT_ALLOW allows it (403 otherwise). */
              source_uri: string;
              credentials:
                | {
                    /** @description An IAM role the node assumes with its own credentials, with the owner’s ExternalId (GET /v1/users/{user_id}/sqs-assume-role) that the role’s trust policy must require. */
                    role_arn: string;
                  }
                | {
                    access_key_id: string;
                    /** @description Encrypted at rest; never returned. */
                    secret_access_key: string;
                  };
              timeout?: number | null;
            }
          | {
              /** @enum {string} */
              source_type: 'servicebus';
              /** @description sb://<namespace>.servicebus.windows.net/<queue>; another host only when ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW allows it (403 otherwise). */
              source_uri: string;
              credentials: {
                /** @description A shared access policy with Listen rights. */
                shared_access_key_name: string;
                /** @description Encrypted at rest; never returned. */
                shared_access_key: string;
              };
              timeout?: number | null;
            };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventFlow'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventFlow.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
        flow_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventFlow'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventFlow.delete': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
        flow_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventFlow.update': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
        flow_id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          enabled?: boolean;
          version?: string | null;
          timeout?: number | null;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventFlow'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventDelivery.list': {
    parameters: {
      query?: {
        /** @description Page size, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
        /** @description Only this flow’s. */
        flow?: string;
      };
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            marker: string | null;
            next_link: string | null;
            results: components['schemas']['EventDelivery'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventFlow.assumeRole': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The account’s id or name. */
        user_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SqsAssumeRole'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'eventListener.list': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The account’s id (GET /v1/users/{name} gives it) or its name. */
        user_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventListener'][];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.list': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: components['schemas']['ScmConfig'][];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.get': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Spec "SCM configuration". The OAuth client secret is never shown. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScmConfig'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.create': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          name?: string;
          provider?: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
          default?: boolean;
          enabled?: boolean;
          oauth?: {
            client_id?: string;
            client_secret?: string;
          };
          scm?: {
            client_id?: string;
          };
          urls?: {
            web?: string;
            api?: string;
            ssh?: string;
          };
        };
      };
    };
    responses: {
      /** @description Spec "SCM configuration". The OAuth client secret is never shown. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScmConfig'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.delete': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.update': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          name?: string;
          provider?: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
          default?: boolean;
          enabled?: boolean;
          oauth?: {
            client_id?: string;
            client_secret?: string;
          };
          scm?: {
            client_id?: string;
          };
          urls?: {
            web?: string;
            api?: string;
            ssh?: string;
          };
        };
      };
    };
    responses: {
      /** @description Spec "SCM configuration". The OAuth client secret is never shown. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScmConfig'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.tokenStatus': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Spec "SCM token status" (endpoint 1): the provider was asked, now. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScmTokenStatus'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.authorize': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @description A path of this service, e.g. /account. */
          return_to?: string;
        } | null;
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            authorize_url: string;
            /** @description The flow must end before this. */
            expires_at: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.oauthCallback': {
    parameters: {
      query: {
        code?: string;
        /** @description The state algohost sent to the provider. */
        state: string;
        error?: string;
        error_description?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      302: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.revoke': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.sync': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description What happened: the build queued, "up to date", or why nothing was built. */
            result: string;
            commit_sha: string | null;
            build?: components['schemas']['Build'];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.connectionStatus': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        owner: string;
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            scm_connection_status: 'active' | 'unauthorized' | 'repository_missing';
            last_delivery?: components['schemas']['ScmDelivery'];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'scm.webhook': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        algorithmId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description What happened: the build queued, "up to date", or why nothing was built. */
            result: string;
            commit_sha: string | null;
            build?: components['schemas']['Build'];
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'insightsConnection.get': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A connected Kafka cluster (GET /v1/admin/event-clusters). */
            cluster: {
              id: string;
              name: string;
            };
            topic: string;
            created_at: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'insightsConnection.create': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @description The id or name of a connected Kafka cluster. */
          cluster: string;
          /** @description An existing topic of that cluster. */
          topic: string;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A connected Kafka cluster (GET /v1/admin/event-clusters). */
            cluster: {
              id: string;
              name: string;
            };
            topic: string;
            created_at: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'insightsConnection.delete': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'insights.report': {
    parameters: {
      query?: never;
      header?: {
        /** @description The token of the running call. */
        'x-algohost-insights-token'?: string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description At most 25 metrics. */
    requestBody: {
      content: {
        'application/json': {
          insight_key: string;
          insight_value: unknown;
        }[];
      };
    };
    responses: {
      /** @description Default Response */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            accepted: number;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.call': {
    parameters: {
      query?: {
        /** @description Seconds, default 300, at most 3000. */
        timeout?: string;
        /** @description true: include what the algorithm printed (owner and members only). */
        stdout?: string;
        /** @description raw: the bare result as the body; void: run asynchronously; anything else: the envelope. */
        output?: string;
      };
      header?: never;
      path: {
        '*': string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json':
            | components['schemas']['CallResult']
            | components['schemas']['CallFailure']
            | {
                /** @enum {boolean} */
                async: true;
                request_id: string;
              };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'algorithm.call.result': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        request_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description An async call: running, then completed with the envelope a sync call would have answered. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AsyncCallStatus'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'data.get': {
    parameters: {
      query?: {
        /** @description The marker of the previous page, unchanged (base64url; 5002 otherwise). */
        marker?: string;
        /** @description Entries per page, 1–1000 (default 50); 5003 otherwise. */
        limit?: string;
        /** @description true: add the collection's read ACL to the listing. */
        acl?: string;
      };
      header?: never;
      path: {
        '*': string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A listing, or the file */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DataDirectory'];
          'application/octet-stream': string;
          'text/plain': string;
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'data.put': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        '*': string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/octet-stream': string;
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description The data:// address. */
            result: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'data.create': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        '*': string;
      };
      cookie?: never;
    };
    /** @description acl only for a collection (a folder at an account's root); 400 on other folders. */
    requestBody: {
      content: {
        'application/json': {
          /** @description 1–255 characters; no "/", control characters, "." or "..". */
          name: string;
          acl?: {
            /** @description [] private, ["algo://.my/*"] my algorithms (the default), ["user://*"] public. */
            read: ('user://*' | 'algo://.my/*')[];
          } | null;
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description The data:// address. */
            result: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'data.delete': {
    parameters: {
      query?: {
        /** @description true: delete a folder with its contents. */
        force?: string;
      };
      header?: never;
      path: {
        '*': string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DataDeleteResult'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  'data.update': {
    parameters: {
      query?: never;
      header?: never;
      path: {
        '*': string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          acl: {
            /** @description [] private, ["algo://.my/*"] my algorithms (the default), ["user://*"] public. */
            read: ('user://*' | 'algo://.my/*')[];
          };
        };
      };
    };
    responses: {
      /** @description Default Response */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description The data:// address. */
            result: string;
          };
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Every failure: a numeric code (docs/compatibility.md §1) and a message. */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
}
