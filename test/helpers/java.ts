// Java models generated from the AsyncAPI document as a mod author would (Modelina, Jackson preset),
// compiled with javac and run with Jackson 2 from Debian's libjackson2-databind-java. .ci/run
// installs openjdk-17-jdk-headless and libjackson2-databind-java when they are missing.

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JAVA_JACKSON_PRESET, JavaFileGenerator } from '@asyncapi/modelina';

const run = promisify(execFile);

export const JACKSON_JARS = ['jackson-databind', 'jackson-core', 'jackson-annotations'].map((j) => `/usr/share/java/${j}.jar`);

/** Why Java cannot run here, or null when javac and the Jackson jars are installed. */
export async function javaMissing(): Promise<string | null> {
  const jars = JACKSON_JARS.filter((j) => !existsSync(j));
  if (jars.length > 0) return `missing ${jars.join(', ')} (apt-get install libjackson2-databind-java)`;
  try {
    await run('javac', ['-version']);
    return null;
  } catch {
    return 'javac not found (apt-get install openjdk-17-jdk-headless)';
  }
}

/** Generates the models of `document` (AsyncAPI, as JSON) into `dir`/src as package `pkg`; returns the class names. */
export async function generateJavaModels(document: object, dir: string, pkg: string): Promise<string[]> {
  const generator = new JavaFileGenerator({ presets: [JAVA_JACKSON_PRESET] });
  const out = join(dir, 'src', ...pkg.split('.'));
  mkdirSync(out, { recursive: true });
  const models = await generator.generateToFiles(document, out, { packageName: pkg });
  return models.map((m) => m.modelName);
}

/** Writes `sources` (path under src/ to text), compiles everything under src/ and runs `main` with `args`. */
export async function compileAndRun(dir: string, sources: Record<string, string>, main: string, args: string[]): Promise<string> {
  for (const [path, text] of Object.entries(sources)) writeFileSync(join(dir, 'src', path), text);
  const classpath = [join(dir, 'classes'), ...JACKSON_JARS].join(':');
  const { stdout: list } = await run('find', [join(dir, 'src'), '-name', '*.java']);
  await run('javac', ['-nowarn', '-d', join(dir, 'classes'), '-cp', JACKSON_JARS.join(':'), ...list.trim().split('\n')], { maxBuffer: 16 << 20 });
  const { stdout } = await run('java', ['-cp', classpath, main, ...args], { maxBuffer: 16 << 20 });
  return stdout;
}
