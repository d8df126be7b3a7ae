/** The catalog of languages and environments, kept as data files in packages/server/catalog/. */
export interface LanguageSpec {
  name: string;
  display_name: string;
  req_files: string[];
  artifacts: { source: string; destination: string }[];
  /** The `settings.language` value of the original platform's create form (e.g. python3-1). */
  legacy_language?: string;
}

export interface EnvironmentSpec {
  name: string;
  language: string;
  display_name: string;
  description: string;
  /** The runtime this environment really runs; tests check it against the installed one. */
  runtime: { name: string; version: string };
  machine_type: 'CPU' | 'GPU';
  specification_id: string;
  template: string;
  /** `legacy_language/hardware` pairs of the original create form that resolve here. */
  default_for?: string[];
}

export interface TemplateFile {
  /** Path with `__ALGO_NAME__` / `__ALGO_NAME_LOWER__` placeholders. */
  path: string;
  content: Buffer;
  mode: number;
}

export interface CatalogData {
  languages: LanguageSpec[];
  environments: EnvironmentSpec[];
  templates: Map<string, TemplateFile[]>;
}

/** An environment as registered on this cluster: the spec plus its cluster-local id. */
export interface Environment extends EnvironmentSpec {
  id: string;
  createdAt: string;
  languageSpec: LanguageSpec;
}

export interface EnvironmentStore {
  /** Registers names not yet known with fresh ids; returns every name's id and creation time. */
  ensure(names: string[], newId: () => string, now: string): Promise<Map<string, { id: string; createdAt: string }>>;
}
