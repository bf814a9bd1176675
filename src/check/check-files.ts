// History files checked one after the other: what `pole-bench check` does, and what `bench check`
// times over many files. The one part of check/ that reads files.
import { readFile } from 'node:fs/promises';
import { checkHistory, type HistoryCheck } from './check-history.js';
import { pairOperations } from './history-ops.js';
import type { ModelName } from './register-model.js';
import { detectFormat, readHistory, type HistoryFormat } from './read-history.js';

export interface FileOptions {
  /** auto: cas-register where the history has a cas, else register. */
  readonly model: ModelName | 'auto';
  readonly format: HistoryFormat | 'auto';
  /** Each file's time (ms). */
  readonly budgetMs: number;
}

export interface CheckedFile {
  readonly file: string;
  readonly format: HistoryFormat;
  readonly check: HistoryCheck;
}

/** A file that cannot be read (as opposed to one that breaks its format: HistoryError). */
export class UnreadableHistory extends Error {
  override readonly name = 'UnreadableHistory';
}

export async function checkFile(file: string, o: FileOptions): Promise<CheckedFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UnreadableHistory(`${file}: ${(err as Error).message}`);
  }
  const format = o.format === 'auto' ? detectFormat(text) : o.format;
  const ops = pairOperations(readHistory(text, format));
  const model = o.model === 'auto' ? (ops.some((x) => x.f === 'cas') ? 'cas-register' : 'register') : o.model;
  return { file, format, check: checkHistory(ops, { model, budgetMs: o.budgetMs }) };
}
