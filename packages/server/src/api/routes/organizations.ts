import { Type } from 'typebox';
import { ORGANIZATION_TYPES } from '../../domain/accounts/model.js';
import { parsePageRequest } from '../../domain/pagination.js';
import { principalOf } from '../auth.js';
import { type Api, type ApiServices, requestUrl } from '../context.js';
import { invitationJson, organizationJson, pageJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses, OrganizationCreateInput, OrganizationUpdateInput, PageQuery, Paged } from '../schemas.js';

const OrgRef = Type.Ref('Organization');
const OrgParams = Type.Object({ org_name: Type.String() });
const MemberParams = Type.Object({ org_name: Type.String(), username: Type.String() });
const Role = Type.Union([Type.Literal('owner'), Type.Literal('member')]);
const InvitationRef = Type.Ref('Invitation');
const UserParams = Type.Object({ account_name: Type.String() });
const UserOrgParams = Type.Object({ account_name: Type.String(), org_name: Type.String() });

export function organizationRoutes(app: Api, s: Pick<ApiServices, 'organizations' | 'links'>): void {
  app.get('/v1/organization/types', {
    schema: {
      operationId: 'organization.types',
      tags: ['organizations'],
      summary: 'Organization types; clients map type names to these ids.',
      response: { 200: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })), ...errorResponses(401) },
    },
    handler: async () => ORGANIZATION_TYPES.map((t) => ({ id: t.id, name: t.name })),
  });

  app.post('/v1/organizations', {
    schema: {
      operationId: 'organization.create',
      tags: ['organizations'],
      summary: 'Create an organization; the caller becomes its owner.',
      body: OrganizationCreateInput,
      response: { 200: OrgRef, ...errorResponses(...AUTH_ERRORS, 409) },
    },
    handler: async (req) => organizationJson(await s.organizations.create(principalOf(req), req.body), s.links),
  });

  app.get('/v1/organizations', {
    schema: {
      operationId: 'organization.list',
      tags: ['organizations'],
      summary: 'List organizations (admin key).',
      querystring: PageQuery,
      response: { 200: Paged(OrgRef), ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.organizations.list(principalOf(req), page);
      return pageJson(result, (o) => organizationJson(o, s.links), requestUrl(s.links, req.url), page.limit);
    },
  });

  app.get('/v1/organizations/:org_name', {
    schema: {
      operationId: 'organization.get',
      tags: ['organizations'],
      summary: 'Get an organization (members and admins).',
      params: OrgParams,
      response: { 200: OrgRef, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => organizationJson(await s.organizations.get(principalOf(req), req.params.org_name), s.links),
  });

  app.put('/v1/organizations/:org_name', {
    schema: {
      operationId: 'organization.update',
      tags: ['organizations'],
      summary: 'Update an organization (owners and admins). Omitted fields are kept.',
      params: OrgParams,
      body: OrganizationUpdateInput,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.organizations.update(principalOf(req), req.params.org_name, req.body);
      return reply.code(204).send(null);
    },
  });

  app.delete('/v1/organizations/:org_name', {
    schema: {
      operationId: 'organization.delete',
      tags: ['organizations'],
      summary: 'Delete an organization and its algorithms (owners and admins).',
      params: OrgParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.organizations.delete(principalOf(req), req.params.org_name);
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/organizations/:org_name/members', {
    schema: {
      operationId: 'organization.members.list',
      tags: ['organizations'],
      summary: 'List members with their roles.',
      params: OrgParams,
      response: { 200: Type.Array(Type.Object({ username: Type.String(), role: Role })), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) =>
      (await s.organizations.members(principalOf(req), req.params.org_name)).map((m) => ({ username: m.user.name, role: m.role })),
  });

  app.put('/v1/organizations/:org_name/members/:username', {
    schema: {
      operationId: 'organization.members.add',
      'x-body-optional': true,
      tags: ['organizations'],
      summary: "Invite a user, or change a member's role (owners and admins). The body may be empty; role defaults to member.",
      description:
        "For a user who is not a member, an owner's request invites: 202 with the pending invitation, which the user accepts " +
        "(POST /v1/users/{user}/invitations/{org}) or declines; asking again changes its role. A member's role changes at once " +
        '(204). A cluster admin adds directly (204).',
      params: MemberParams,
      body: Type.Optional(Type.Union([Type.Object({ role: Type.Optional(Role) }), Type.Null()])),
      response: { 202: InvitationRef, 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404, 409) },
    },
    handler: async (req, reply) => {
      const { invitation } = await s.organizations.addMember(principalOf(req), req.params.org_name, req.params.username, req.body?.role);
      if (invitation) return reply.code(202).send(invitationJson(invitation));
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/organizations/:org_name/invitations', {
    schema: {
      operationId: 'organization.invitations.list',
      tags: ['organizations'],
      summary: 'Pending invitations (owners and admins).',
      params: OrgParams,
      response: { 200: Type.Array(InvitationRef), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => (await s.organizations.invitations(principalOf(req), req.params.org_name)).map(invitationJson),
  });

  app.delete('/v1/organizations/:org_name/invitations/:username', {
    schema: {
      operationId: 'organization.invitations.withdraw',
      tags: ['organizations'],
      summary: 'Withdraw a pending invitation (owners and admins).',
      params: MemberParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.organizations.withdrawInvitation(principalOf(req), req.params.org_name, req.params.username);
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/users/:account_name/invitations', {
    schema: {
      operationId: 'user.invitations.list',
      tags: ['organizations'],
      summary: 'Invitations waiting for the user (the user and admins).',
      params: UserParams,
      response: { 200: Type.Array(InvitationRef), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => (await s.organizations.invitationsOf(principalOf(req), req.params.account_name)).map(invitationJson),
  });

  app.post('/v1/users/:account_name/invitations/:org_name', {
    schema: {
      operationId: 'user.invitations.accept',
      'x-body-optional': true,
      tags: ['organizations'],
      summary:
        'Accept an invitation and become a member with its role (the invited user only, with a session or a key holding every capability).',
      params: UserOrgParams,
      body: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
      response: {
        200: Type.Object({ org_name: Type.String(), username: Type.String(), role: Role }),
        ...errorResponses(...AUTH_ERRORS, 404),
      },
    },
    handler: async (req) => {
      const { organization, user, role } = await s.organizations.acceptInvitation(
        principalOf(req),
        req.params.account_name,
        req.params.org_name,
      );
      return { org_name: organization.name, username: user.name, role };
    },
  });

  app.delete('/v1/users/:account_name/invitations/:org_name', {
    schema: {
      operationId: 'user.invitations.decline',
      tags: ['organizations'],
      summary: 'Decline an invitation (the invited user, or an admin).',
      params: UserOrgParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.organizations.declineInvitation(principalOf(req), req.params.account_name, req.params.org_name);
      return reply.code(204).send(null);
    },
  });

  app.delete('/v1/organizations/:org_name/members/:username', {
    schema: {
      operationId: 'organization.members.remove',
      tags: ['organizations'],
      summary: 'Remove a member (owners, admins, or the member leaving); 409 for the last owner.',
      params: MemberParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404, 409) },
    },
    handler: async (req, reply) => {
      await s.organizations.removeMember(principalOf(req), req.params.org_name, req.params.username);
      return reply.code(204).send(null);
    },
  });
}
