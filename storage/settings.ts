import type { Kysely } from 'kysely';
import { nowIso } from './db.js';
import type { Database } from './schema.js';

export interface StoredSetting {
  name: string;
  /** Parsed JSON. */
  value: unknown;
  revision: number;
  updated_at: string;
  updated_by: string | null;
}

/** The settings table: operators' edits (JSON by name) that override the config file's defaults. */
export class SettingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async all(): Promise<StoredSetting[]> {
    const rows = await this.db.selectFrom('settings').selectAll().orderBy('name').execute();
    return rows.map((row) => ({ ...row, value: JSON.parse(row.value) as unknown }));
  }

  /** Writes a setting, its revision one above the previous one (1 for a new one). */
  async put(name: string, value: unknown, updatedBy: string | null): Promise<void> {
    const json = JSON.stringify(value);
    const now = nowIso();
    await this.db
      .insertInto('settings')
      .values({ name, value: json, revision: 1, updated_at: now, updated_by: updatedBy })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: json, revision: eb('settings.revision', '+', 1), updated_at: now, updated_by: updatedBy })))
      .execute();
  }

  async remove(name: string): Promise<void> {
    await this.db.deleteFrom('settings').where('name', '=', name).execute();
  }
}
