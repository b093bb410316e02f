// What a process can be configured as (relay serve, relay config check); each has its environment
// schema in schema.ts. Its own file so the CLI can offer the names without loading the schemas.
export const SERVICE_KINDS = ['ingress', 'gateway', 'admin', 'all'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];
