import crypto from 'node:crypto';
import { type Clock, isoNow } from '../clock.js';
import { Errors, invalid } from '../errors.js';
import { tarGzip, type TarEntry } from '../../lib/tar.js';
import type { CatalogData, Environment, EnvironmentStore, LanguageSpec, TemplateFile } from './model.js';

export interface TemplateNames {
  algoName: string;
  owner: string;
}

/**
 * Languages, environments and templates. Environment ids are generated once per cluster and
 * kept in the database, so they survive restarts and differ between clusters (docs/compatibility.md
 * §9.6); specification ids come from the catalog files and name templates everywhere.
 */
export class Catalog {
  private readonly byId = new Map<string, Environment>();
  private readonly byName = new Map<string, Environment>();
  private readonly bySpecId = new Map<string, Environment>();
  private readonly languages: LanguageSpec[];
  private readonly tarCache = new Map<string, Buffer>();

  private constructor(
    private readonly data: CatalogData,
    environments: Environment[],
  ) {
    this.languages = data.languages;
    for (const env of environments) {
      this.byId.set(env.id, env);
      this.byName.set(env.name, env);
      this.bySpecId.set(env.specification_id, env);
    }
  }

  static async load(data: CatalogData, store: EnvironmentStore, clock: Clock): Promise<Catalog> {
    const ids = await store.ensure(
      data.environments.map((e) => e.name),
      () => crypto.randomUUID(),
      isoNow(clock),
    );
    const envs = data.environments.map((spec) => {
      const languageSpec = data.languages.find((l) => l.name === spec.language);
      if (!languageSpec) throw new Error(`catalog: environment ${spec.name} names unknown language ${spec.language}`);
      if (!data.templates.has(spec.template)) throw new Error(`catalog: environment ${spec.name} names missing template ${spec.template}`);
      const row = ids.get(spec.name)!;
      return { ...spec, id: row.id, createdAt: row.createdAt, languageSpec };
    });
    return new Catalog(data, envs);
  }

  listLanguages(): LanguageSpec[] {
    return this.languages;
  }

  listEnvironments(languageName: string): Environment[] {
    if (!this.languages.some((l) => l.name === languageName)) {
      throw Errors.unknownLanguage({ language: languageName });
    }
    return [...this.byId.values()].filter((e) => e.language === languageName);
  }

  environmentByName(name: string): Environment | undefined {
    return this.byName.get(name);
  }

  /**
   * Picks the environment of a create request: an environment id of this cluster (or a name),
   * else a language (catalog name or legacy value such as python3-1) with a hardware class,
   * else the configured default.
   */
  resolveForCreate(req: { algorithmEnvironment?: string; language?: string; hardware?: string }, defaultName: string): Environment {
    if (req.algorithmEnvironment) {
      const env = this.byId.get(req.algorithmEnvironment) ?? this.byName.get(req.algorithmEnvironment);
      if (!env) {
        throw Errors.environmentNotFound(
          `settings.algorithm_environment "${req.algorithmEnvironment}" is not an environment of this cluster; environment ids differ between clusters, list them with GET /v1/algorithm-environments/edge/languages/{language}/environments`,
        );
      }
      return env;
    }
    if (req.language) {
      const hardware = (req.hardware ?? 'cpu').toLowerCase();
      if (hardware !== 'cpu' && hardware !== 'gpu') throw invalid(`settings.environment must be "cpu" or "gpu", not "${req.hardware}"`);
      const legacy = [...this.byId.values()].find((e) => e.default_for?.includes(`${req.language}/${hardware}`));
      if (legacy) return legacy;
      const lang = this.languages.find((l) => l.name === req.language);
      if (!lang) throw Errors.unknownLanguageSetting({ language: req.language });
      const env = [...this.byId.values()].find((e) => e.language === lang.name && e.machine_type.toLowerCase() === hardware);
      if (!env) throw Errors.environmentNotFound(`language "${req.language}" has no ${hardware.toUpperCase()} environment`);
      return env;
    }
    const env = this.byName.get(defaultName);
    if (!env) throw new Error(`configured default environment "${defaultName}" is not in the catalog`);
    // A hardware class alone picks the default language's environment of that class.
    if (req.hardware !== undefined && req.hardware.toLowerCase() !== env.machine_type.toLowerCase()) {
      return this.resolveForCreate({ language: env.language, hardware: req.hardware }, defaultName);
    }
    return env;
  }

  /** Template files with the algorithm's names filled in. */
  renderTemplate(env: Environment, names: TemplateNames): TarEntry[] {
    const files = this.data.templates.get(env.template)!;
    return files.map((f) => render(f, names));
  }

  /** Spec endpoint 5: a gzipped tar of the template, filled with generic names. */
  templateArchive(specificationId: string): Buffer {
    const env = this.bySpecId.get(specificationId);
    if (!env) throw Errors.environmentSpecNotFound({ id: specificationId });
    let tar = this.tarCache.get(specificationId);
    if (!tar) {
      tar = tarGzip(this.renderTemplate(env, { algoName: 'Algorithm', owner: 'user' }), Math.floor(Date.parse(env.createdAt) / 1000));
      this.tarCache.set(specificationId, tar);
    }
    return tar;
  }
}

function render(file: TemplateFile, n: TemplateNames): TarEntry {
  const lower = n.algoName.toLowerCase();
  const path = file.path.replaceAll('__ALGO_NAME_LOWER__', lower).replaceAll('__ALGO_NAME__', n.algoName);
  const text = file.content.toString('utf8');
  // Only text files carry placeholders; binary content passes through untouched.
  const content = text.includes('{{')
    ? Buffer.from(
        text.replaceAll('{{ALGO_NAME_LOWER}}', lower).replaceAll('{{ALGO_NAME}}', n.algoName).replaceAll('{{ALGO_OWNER}}', n.owner),
      )
    : file.content;
  return { path, content, mode: file.mode };
}
