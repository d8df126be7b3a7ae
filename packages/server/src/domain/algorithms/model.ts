export const LICENSES = ['apl', 'apache2', 'gpl3', 'mit'] as const;
export const SOURCE_VISIBILITIES = ['open', 'closed'] as const;
export const CALLABILITIES = ['private', 'public'] as const;
export const NETWORK_ACCESS = ['isolated', 'full'] as const;

export interface AlgorithmSettings {
  algorithmCallability: (typeof CALLABILITIES)[number];
  sourceVisibility: (typeof SOURCE_VISIBILITIES)[number];
  license: (typeof LICENSES)[number];
  royaltyMicrocredits: number;
  networkAccess: (typeof NETWORK_ACCESS)[number];
  pipelineEnabled: boolean;
  insightsEnabled: boolean;
  environmentName: string;
}

export interface Algorithm {
  id: string;
  ownerId: string;
  ownerName: string;
  name: string;
  details: { label: string | null; summary: string | null; tagline: string | null };
  settings: AlgorithmSettings;
  createdAt: string;
  updatedAt: string;
}
