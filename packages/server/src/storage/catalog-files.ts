/** Reads the language/environment catalog and the template trees from packages/server/catalog. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CatalogData, EnvironmentSpec, LanguageSpec, TemplateFile } from '../domain/catalog/model.js';

export const CATALOG_DIR = fileURLToPath(new URL('../../catalog/', import.meta.url));

export function readCatalog(dir: string = CATALOG_DIR): CatalogData {
  const languages = JSON.parse(fs.readFileSync(path.join(dir, 'languages.json'), 'utf8')) as LanguageSpec[];
  const environments = JSON.parse(fs.readFileSync(path.join(dir, 'environments.json'), 'utf8')) as EnvironmentSpec[];
  const templates = new Map<string, TemplateFile[]>();
  for (const name of new Set(environments.map((e) => e.template))) {
    const root = path.join(dir, 'templates', name);
    if (fs.existsSync(root)) templates.set(name, readTree(root, ''));
  }
  return { languages, environments, templates };
}

function readTree(root: string, rel: string): TemplateFile[] {
  const out: TemplateFile[] = [];
  for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const relPath = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...readTree(root, relPath));
    else if (entry.isFile()) {
      const full = path.join(root, relPath);
      out.push({ path: relPath, content: fs.readFileSync(full), mode: fs.statSync(full).mode & 0o777 });
    }
  }
  return out;
}
