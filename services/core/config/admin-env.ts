// The admin service's own variables (its port, its connection caps, its tokens).

import { Type } from '@sinclair/typebox';
import { secret } from './env-annotations.js';

export const AdminEnv = {
  ADMIN_HOST: Type.String({
    default: '127.0.0.1',
    pattern: '^\\S+$',
    description: "Address the admin service (console and admin API) listens on; this machine only unless set (0.0.0.0 behind the operators' proxy).",
  }),
  ADMIN_ALLOWED_HOSTS: Type.String({
    default: '',
    description: 'Host names the admin service answers to besides localhost, 127.0.0.1, [::1] and ADMIN_HOST: comma-separated host or host:port (the name operators reach it by through a proxy); any other Host is refused with 421.',
  }),
  ADMIN_PORT: Type.Integer({ default: 8090, minimum: 0, maximum: 65535, description: 'Port of the admin service, never the client port (0 picks a free one).' }),
  ADMIN_MAX_CONNECTIONS: Type.Integer({
    default: 8192,
    minimum: 16,
    maximum: 65_536,
    description:
      'Connections the admin service takes, every address together (about 10 KiB each); beyond it, new ones are reset at once. The last resort: with the default per-address cap it takes 64 addresses to fill it, and they can.',
  }),
  ADMIN_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({
    default: 128,
    minimum: 0,
    description:
      'Connections one client address (IPv6: one PROFILE_API_IPV6_PREFIX block) may hold open to the admin service (room for all 64 live tails it allows and more); beyond it, new ones are reset at once, before anything is read. At most a quarter of ADMIN_MAX_CONNECTIONS. Peers named in TRUSTED_PROXIES are not capped (every operator arrives through them). 0: no per-address cap.',
  }),
  ADMIN_TOKEN: Type.String({
    default: '',
    description: 'Bearer token of the console and admin API, named "admin" in the audit trail; at least 24 characters. npm start generates one.',
    ...secret,
  }),
  ADMIN_TOKENS: Type.String({
    default: '',
    description: 'Several named tokens, name=token comma-separated (ana=...,ben=...), so the audit trail says who acted; with or instead of ADMIN_TOKEN.',
    ...secret,
  }),
};
